// s3rver ships no types: the part of its API the tests use.
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    resetOnClose?: boolean;
    configureBuckets?: { name: string; configs: (string | Buffer)[] }[];
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** `event`: S3 notification records (bench/offsite.ts times the objects the bucket receives). */
    on(event: 'event', listener: (event: { Records: S3rverRecord[] }) => void): this;
  }

  interface S3rverRecord {
    eventName: string;
    s3: { object: { key: string; size?: number } };
  }
}
