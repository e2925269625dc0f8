/**
 * The `.tar.gz` archives dumps and snapshots are: a directory tree packed into one file,
 * and unpacked back under a directory that nothing in the archive can leave.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';

export class ArchiveError extends Error {}

/** Packs the tree under `dir` into `file` (gzip), fsynced; entries are relative to `dir`. */
export async function packDirectory(dir: string, file: string): Promise<void> {
  const pack = tar.pack();
  const out = fs.createWriteStream(file);
  const done = pipeline(pack, zlib.createGzip({ level: 6 }), out);
  const walk = async (rel: string): Promise<void> => {
    const abs = path.join(dir, rel);
    const entries = fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const name = rel ? `${rel}/${e.name}` : e.name;
      const full = path.join(dir, name);
      if (e.isDirectory()) {
        await entry(pack, { name: `${name}/`, type: 'directory', mode: 0o755 });
        await walk(name);
      } else if (e.isFile()) {
        const size = fs.statSync(full).size;
        await new Promise<void>((resolve, reject) => {
          const sink = pack.entry({ name, size, mode: 0o644 }, (err) => (err ? reject(err) : resolve()));
          fs.createReadStream(full).on('error', reject).pipe(sink);
        });
      }
    }
  };
  try {
    await walk('');
    pack.finalize();
    await done;
  } catch (err) {
    pack.destroy(err as Error);
    await done.catch(() => undefined);
    throw err;
  }
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function entry(pack: tar.Pack, header: Parameters<tar.Pack['entry']>[0]): Promise<void> {
  return new Promise((resolve, reject) => pack.entry(header, (err) => (err ? reject(err) : resolve())));
}

/**
 * Unpacks `file` into `dest` (created). Only plain files and directories are accepted, and
 * each name must stay under `dest`: an absolute name, a `..` step, a link or a device
 * refuses the whole archive. A damaged or truncated archive is refused too.
 */
export async function unpackArchive(file: string, dest: string): Promise<void> {
  fs.mkdirSync(dest, { recursive: true });
  const root = path.resolve(dest);
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    // The entry's stream dies with the extractor: its error is the extractor's.
    stream.on('error', () => undefined);
    const fail = (message: string) => extract.destroy(new ArchiveError(message));
    const name = header.name.replace(/^(\.\/)+/, '');
    if (name === '' || name === '.' || name === './') {
      stream.resume();
      stream.on('end', next);
      return;
    }
    const target = path.resolve(root, name);
    if (path.isAbsolute(name) || name.split(/[/\\]/).includes('..') || !target.startsWith(root + path.sep)) {
      fail(`the archive entry \`${header.name}\` points outside the directory it is unpacked into`);
      return;
    }
    if (header.type === 'directory') {
      fs.mkdirSync(target, { recursive: true });
      stream.resume();
      stream.on('end', next);
      return;
    }
    if (header.type !== 'file' && header.type !== 'contiguous-file') {
      fail(`the archive entry \`${header.name}\` is a ${header.type}, not a file or a directory`);
      return;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const out = fs.createWriteStream(target, { flags: 'wx' });
    stream.pipe(out);
    out.on('error', (err) => extract.destroy(err));
    out.on('finish', () => next());
  });
  try {
    await pipeline(fs.createReadStream(file), zlib.createGunzip(), extract);
  } catch (err) {
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`the archive \`${path.basename(file)}\` could not be read: ${(err as Error).message}`);
  }
}
