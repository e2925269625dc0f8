/**
 * API keys. A key's value is never stored: it is the lowercase hex HMAC-SHA256 of its
 * uid with the master key as secret, so changing the master key changes every value.
 * Presented tokens are matched against every key in constant time.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { KvOp } from '../native';
import { jsonValue, type Records } from '../store/durable';
import { isoToMicros, nowIso } from '../util/time';

export interface KeyRecord {
  uid: string;
  name: string | null;
  description: string | null;
  actions: string[];
  indexes: string[];
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const DB = 'keys';

const DEFAULT_KEYS: Array<Pick<KeyRecord, 'name' | 'description' | 'actions'>> = [
  {
    name: 'Default Chat API Key',
    description: 'Use it to chat and search from the frontend',
    actions: ['chatCompletions', 'search'],
  },
  {
    name: 'Default Read-Only Admin API Key',
    description:
      'Use it to read information across the whole database. Caution! Do not expose this key on a public frontend',
    actions: ['*.get', 'keys.get'],
  },
  {
    name: 'Default Admin API Key',
    description: 'Use it for anything that is not a search operation. Caution! Do not expose it on a public frontend',
    actions: ['*'],
  },
  { name: 'Default Search API Key', description: 'Use it to search from the frontend', actions: ['search'] },
];

export class KeyStore {
  private readonly keys = new Map<string, KeyRecord>();
  /** Key values by uid, computed once: every authenticated request compares against all of them. */
  private readonly values = new Map<string, Buffer>();

  constructor(
    private readonly records: Records,
    private readonly masterKey: string | null,
  ) {
    for (const { value } of records.kv.scan(DB)) {
      const k = JSON.parse(value.toString()) as KeyRecord;
      this.keys.set(k.uid, k);
    }
    records.watch(DB, (op) => {
      if (!op.value) {
        this.keys.delete(op.key);
        this.values.delete(op.key);
      } else {
        this.keys.set(op.key, JSON.parse(op.value.toString()) as KeyRecord);
      }
    });
  }

  /** Creates the default keys when the store is empty (first start, or all deleted). */
  async ensureDefaults(): Promise<void> {
    if (this.keys.size > 0) return;
    await this.put(defaultKeys());
  }

  async put(keys: KeyRecord[]): Promise<void> {
    await this.records.commit(keys.map(keyOp));
  }

  async delete(uid: string): Promise<void> {
    await this.records.commit([{ db: DB, key: uid, value: null }]);
  }

  /** Newest first (timestamps compared as instants: their fractions have varying lengths). */
  list(): KeyRecord[] {
    const at = (k: KeyRecord) => isoToMicros(k.createdAt) ?? 0n;
    return [...this.keys.values()].sort((a, b) => {
      const d = at(b) - at(a);
      return d > 0n ? 1 : d < 0n ? -1 : 0;
    });
  }

  get(uid: string): KeyRecord | undefined {
    return this.keys.get(uid);
  }

  keyValue(uid: string): string {
    return createHmac('sha256', this.masterKey ?? '')
      .update(uid)
      .digest('hex');
  }

  /** A key by uid or by its value. */
  find(uidOrKey: string): KeyRecord | undefined {
    return this.keys.get(uidOrKey) ?? this.findByValue(uidOrKey);
  }

  /** The key whose value is `token`, comparing against every key in constant time. */
  findByValue(token: string): KeyRecord | undefined {
    if (this.masterKey === null) return undefined;
    const presented = Buffer.from(token);
    let found: KeyRecord | undefined;
    for (const k of this.keys.values()) {
      let expected = this.values.get(k.uid);
      if (expected === undefined) {
        expected = Buffer.from(this.keyValue(k.uid));
        this.values.set(k.uid, expected);
      }
      // No early exit: the time taken does not depend on which key matched.
      if (expected.length === presented.length && timingSafeEqual(expected, presented)) found = k;
    }
    return found;
  }

  view(k: KeyRecord): Record<string, unknown> {
    return {
      name: k.name,
      description: k.description,
      key: this.keyValue(k.uid),
      uid: k.uid,
      actions: k.actions,
      indexes: k.indexes,
      expiresAt: k.expiresAt,
      createdAt: k.createdAt,
      updatedAt: k.updatedAt,
    };
  }
}

/** The default keys, new uids and dates. */
export function defaultKeys(): KeyRecord[] {
  return DEFAULT_KEYS.map((d) => {
    const now = nowIso();
    return { uid: randomUUID(), ...d, indexes: ['*'], expiresAt: null, createdAt: now, updatedAt: now };
  });
}

export function keyOp(k: KeyRecord): KvOp {
  return { db: DB, key: k.uid, value: jsonValue(k) };
}

export function isMasterKey(masterKey: string, token: string): boolean {
  const a = Buffer.from(masterKey);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
