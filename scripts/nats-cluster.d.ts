/** Types of `nats-cluster.js` (a plain module: the bench and the tests share it). */
import type { ChildProcess } from 'node:child_process';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';

export declare const SKIP_REASON: string;
export declare function natsServerBinary(): string | null;
export declare function freePort(): Promise<number>;
export declare function killAndWait(child: ChildProcess): Promise<void>;

export declare class NatsCluster {
  static start(n: number, dir?: string): Promise<NatsCluster>;
  readonly size: number;
  urls(): string;
  ready(timeoutMs?: number): Promise<void>;
  inspect<T>(fn: (jsm: JetStreamManager, nc: NatsConnection) => Promise<T>): Promise<T>;
  stream(name: string): Promise<{ first_seq: number; last_seq: number; messages: number; leader: string | null }>;
  objects(bucket: string): Promise<string[]>;
  indexOf(name: string): number;
  isUp(i: number): boolean;
  kill(i: number): Promise<void>;
  pause(i: number): void;
  resume(i: number): void;
  restart(i: number): void;
  stop(): Promise<void>;
}
