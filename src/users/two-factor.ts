import { createHash, randomBytes, randomInt } from 'node:crypto';
import { generateSecret, generateURI, verifySync } from 'otplib';
import QRCode from 'qrcode';

/**
 * TOTP (RFC 6238) as authenticator apps know it: SHA-1, 6 digits, 30-second steps, a 160-bit
 * base32 secret. A code is accepted one step either side of now (clock drift, typing time), and
 * only for a step later than the last one accepted (two-factor.service.ts keeps it), so a code seen
 * over a shoulder cannot be used again.
 */
const TOTP_PERIOD_SECONDS = 30;
const ISSUER = 'Sitewarden';
const RECOVERY_CODE_COUNT = 10;
/** Recovery codes: 16 characters from this alphabet (no 0/o, 1/l/i), 80 bits; shown as xxxx-xxxx-xxxx-xxxx. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_LENGTH = 16;

export const newTotpSecret = (): string => generateSecret({ length: 20 });

/** The otpauth:// URI an authenticator app reads (from the QR code, or typed in). */
export const totpUri = (secret: string, username: string): string =>
  generateURI({ issuer: ISSUER, label: username, secret });

/**
 * The URI as an inline SVG QR code: paths with fill and stroke attributes only (no style
 * attribute, no script), so it renders under the dashboard's Content-Security-Policy.
 */
export async function qrCodeSvg(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
  return svg.replace(
    '<svg ',
    '<svg role="img" aria-label="QR code of the authenticator secret" width="200" height="200" ',
  );
}

/** A 6-digit code as typed: spaces and dashes dropped. */
const normalizeTotpCode = (code: string): string => code.replace(/[\s-]/g, '');
export const looksLikeTotpCode = (code: string): boolean => /^\d{6}$/.test(normalizeTotpCode(code));

/**
 * The time step `code` is valid for at `now` (±1 step), or null when it is not valid. The caller
 * refuses a step not later than the last one accepted (replay).
 */
export function totpStep(secret: string, code: string, now: Date): number | null {
  const token = normalizeTotpCode(code);
  if (!/^\d{6}$/.test(token)) return null;
  const result = verifySync({
    secret,
    token,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOTP_PERIOD_SECONDS,
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** Ten new recovery codes, as shown to the user once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: RECOVERY_LENGTH }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
    return [0, 4, 8, 12].map((at) => chars.slice(at, at + 4).join('')).join('-');
  });
}

/** A recovery code as typed (any case, with or without dashes and spaces), in the form that is hashed. */
const normalizeRecoveryCode = (code: string): string => code.toLowerCase().replace(/[\s-]/g, '').slice(0, 64);

/** The stored form: SHA-256 of the normalized code (80 random bits each: a slow hash would add nothing). */
export const hashRecoveryCode = (code: string): string =>
  createHash('sha256')
    .update(`sitewarden-recovery:${normalizeRecoveryCode(code)}`)
    .digest('hex');

/** A random opaque token (the pending second step of a sign-in). */
export const randomToken = (): string => randomBytes(32).toString('base64url');
