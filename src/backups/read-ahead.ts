/** How far a sequential reader of a store reads ahead: objects in flight, and their expected bytes together. */
export interface ReadAhead {
  objects: number;
  bytes: number;
}

interface Entry<T, V> {
  item: T;
  weight: number;
  started: boolean;
  loading: Promise<V> | null;
}

/**
 * `items` in order, each with what `load` gave for it, with loads started ahead of the reader: up to
 * `limit.objects` at once and `limit.bytes` of their expected `weight` together (one at least,
 * however heavy). An offsite bucket answers each object in tens of milliseconds; read one at a time,
 * a restore of 10,000 small files waits minutes on round trips alone. Items `load` answers `null` for
 * (nothing to read) pass through in their place, at most a few windows ahead. A failed load is thrown
 * where its item comes, in order; a reader that stops early leaves no load unobserved.
 */
export async function* readAhead<T, V>(
  items: AsyncIterable<T>,
  load: (item: T) => Promise<V> | null,
  weight: (item: T) => number,
  limit: ReadAhead,
): AsyncGenerator<[T, V | undefined]> {
  const iterator = items[Symbol.asyncIterator]();
  const queue: Entry<T, V>[] = [];
  const maxQueued = Math.max(1, limit.objects) * 4;
  let loads = 0;
  let bytes = 0;
  let exhausted = false;

  const canStart = (entry: Entry<T, V>) =>
    loads === 0 || (loads < limit.objects && bytes + entry.weight <= limit.bytes);
  const start = (entry: Entry<T, V>) => {
    entry.started = true;
    entry.loading = load(entry.item);
    if (!entry.loading) return;
    entry.loading.catch(() => undefined);
    loads++;
    bytes += entry.weight;
  };
  /** Starts what waits in the queue, then takes further items, until a limit stops it. */
  const fill = async () => {
    for (const entry of queue) {
      if (entry.started) continue;
      if (!canStart(entry)) return;
      start(entry);
    }
    while (!exhausted && queue.length < maxQueued) {
      const next = await iterator.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const entry: Entry<T, V> = { item: next.value, weight: weight(next.value), started: false, loading: null };
      queue.push(entry);
      if (!canStart(entry)) return;
      start(entry);
    }
  };

  try {
    for (;;) {
      await fill();
      const head = queue.shift();
      if (!head) return;
      if (!head.started) start(head);
      if (!head.loading) {
        yield [head.item, undefined];
        continue;
      }
      try {
        yield [head.item, await head.loading];
      } finally {
        loads--;
        bytes -= head.weight;
      }
    }
  } finally {
    await iterator.return?.();
  }
}
