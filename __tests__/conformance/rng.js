'use strict';
/** A small seeded generator (mulberry32): the same seed gives the same requests on every machine. */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  const chance = (p) => next() < p;
  const some = (list, max = list.length) => {
    const n = 1 + int(Math.min(max, list.length));
    const copy = [...list];
    const out = [];
    for (let i = 0; i < n && copy.length; i++) out.push(copy.splice(int(copy.length), 1)[0]);
    return out;
  };
  return { next, int, pick, chance, some };
}
module.exports = { rng };
