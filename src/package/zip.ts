/**
 * A minimal zip writer (PKZIP APPNOTE 6.3: local headers, deflated data, central directory), for
 * the one archive the package ships: the built extension, ready for chrome://extensions or a store
 * upload. Node has deflate but no zip; a dependency for ~100 lines that run once per build is not
 * worth its install. No zip64 (the extension is ~1 MB, far under 4 GiB) and no encryption.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { deflateRawSync } from 'node:zlib';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE), as zip stores it; zlib.crc32 exists only from Node 20.15, engines says 20.10 */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface ZipEntry {
  /** forward slashes, relative, no leading slash */
  name: string;
  data: Uint8Array;
}

/** a fixed time (1980-01-01 00:00, DOS's epoch) so that the same files give the same bytes */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export function zip(entries: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    if (!e.name || e.name.startsWith('/') || e.name.includes('\\') || e.name.split('/').includes('..')) throw new Error(`zip: bad entry name ${JSON.stringify(e.name)}`);
    const name = Buffer.from(e.name, 'utf8');
    const deflated = deflateRawSync(e.data, { level: 9 });
    // a file deflate cannot shrink is stored as it is
    const stored = deflated.length >= e.data.length;
    const body = stored ? Buffer.from(e.data) : deflated;
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // bit 11: names are UTF-8
    local.writeUInt16LE(stored ? 0 : 8, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(0x0800, 8);
    dir.writeUInt16LE(stored ? 0 : 8, 10);
    dir.writeUInt16LE(DOS_TIME, 12);
    dir.writeUInt16LE(DOS_DATE, 14);
    dir.writeUInt32LE(crc, 16);
    dir.writeUInt32LE(body.length, 20);
    dir.writeUInt32LE(e.data.length, 24);
    dir.writeUInt16LE(name.length, 28);
    // 30..37: extra, comment, disk, internal attributes: 0
    dir.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: a regular file, rw-r--r--
    dir.writeUInt32LE(offset, 42);
    parts.push(local, name, body);
    central.push(dir, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** Every file under dir, sorted (the same tree gives the same archive), named relative to dir. */
export function zipDirectory(dir: string, skip: (name: string) => boolean = () => false): Buffer {
  const entries: ZipEntry[] = [];
  const walk = (d: string): void => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const rel = relative(dir, p).split(sep).join('/');
      if (skip(rel)) continue;
      if (statSync(p).isDirectory()) walk(p);
      else entries.push({ name: rel, data: readFileSync(p) });
    }
  };
  walk(dir);
  return zip(entries);
}

/** `node dist/src/package/zip.js DIR OUT`: the build's step that zips the built extension. */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, out] = process.argv.slice(2);
  if (!dir || !out) {
    process.stderr.write('usage: node dist/src/package/zip.js DIR OUT.zip\n');
    process.exit(2);
  }
  writeFileSync(out, zipDirectory(dir));
  process.stderr.write(`zipped ${dir} into ${out}\n`);
}
