/**
 * A key created through another instance of a replicated group may reach this one a moment
 * after the client uses it: a refused key is asked again once this instance has applied what
 * the log held (`authenticateLatest`). Real key store on disk; `catchUp` stands in for the log.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { authenticateLatest } from '../../ts/auth/guard';
import { KeyStore } from '../../ts/auth/keys';
import { KvStore } from '../../ts/native';
import { Durable } from '../../ts/store/durable';
import { tempDir } from '../helpers/server';

const MASTER = 'catch-up-master-key';

describe('a key unknown here when it is first used', () => {
  const kv = KvStore.open(path.join(tempDir(), 'tasks'), 64 * 1024 ** 2);
  const keys = new KeyStore(new Durable(kv), MASTER);
  afterAll(() => kv.close());

  function arriving() {
    const uid = randomUUID();
    const now = new Date().toISOString();
    const record = {
      uid,
      name: null,
      description: null,
      actions: ['search'],
      indexes: ['movies'],
      expiresAt: null,
      createdAt: now,
      updatedAt: now,
    };
    return { record, req: { headers: { authorization: `Bearer ${keys.keyValue(uid)}` } } };
  }

  test('when catching up brings it, then it is accepted', async () => {
    const { record, req } = arriving();
    let asked = 0;
    const auth = await authenticateLatest(req, keys, MASTER, 'search', 'movies', async () => {
      asked++;
      await keys.put([record]);
      return true;
    });
    expect(asked).toBe(1);
    expect(auth.master).toBe(false);
    expect(auth.canSeeIndex('movies')).toBe(true);
  });

  test('when catching up brings nothing new, then the refusal stands; without a log it is refused at once', async () => {
    const { req } = arriving();
    let asked = 0;
    await expect(
      authenticateLatest(req, keys, MASTER, 'search', 'movies', async () => {
        asked++;
        return false;
      }),
    ).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect(asked).toBe(1);
    expect(() => authenticateLatest(req, keys, MASTER, 'search', 'movies', null)).toThrow(
      expect.objectContaining({ code: 'invalid_api_key' }),
    );
  });

  test('when the key is known, then the log is not asked', async () => {
    const { record, req } = arriving();
    await keys.put([record]);
    const auth = authenticateLatest(req, keys, MASTER, 'search', 'movies', async () => {
      throw new Error('must not be asked');
    });
    expect(auth).not.toBeInstanceOf(Promise);
  });
});
