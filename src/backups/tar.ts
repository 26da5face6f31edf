/**
 * Just enough of POSIX tar (ustar, with a pax header for long names) to write a standard
 * archive any `tar` reads.
 */
const BLOCK = 512;

/** Zeros to slice padding from: Buffer.alloc gives every small buffer an ArrayBuffer of its own (two per archived file). */
const ZEROS = Buffer.alloc(BLOCK * 2);

function header(name: string, size: number, mtime: number, type: '0' | 'x'): Buffer {
  const block = Buffer.allocUnsafe(BLOCK).fill(0); // From Node's shared pool.
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, '0') + '\0';
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write(octal(type === 'x' ? 0o644 : 0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 'ascii');
  return block;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** The header blocks of one regular file (a pax header first when the name does not fit ustar's 100 bytes). */
export function tarFileHeader(name: string, size: number, mtime: number): Buffer {
  if (Buffer.byteLength(name) <= 100 && /^[\x20-\x7e]*$/.test(name)) return header(name, size, mtime, '0');
  const pax = Buffer.from(paxRecord('path', name), 'utf8');
  return Buffer.concat([
    header('PaxHeader', pax.length, mtime, 'x'),
    pax,
    tarPadding(pax.length),
    header(name.slice(-100).replace(/[^\x20-\x7e]/g, '_'), size, mtime, '0'),
  ]);
}

/** Zeros that complete a file's last block. */
export const tarPadding = (size: number) => ZEROS.subarray(0, (BLOCK - (size % BLOCK)) % BLOCK);

/** Two empty blocks end an archive. */
export const tarEnd = () => ZEROS.subarray(0, BLOCK * 2);
