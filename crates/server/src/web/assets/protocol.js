// Reads the server's binary world message (layout: src/web/view.rs).
"use strict";

const Protocol = {
  VERSION: 1,

  // ArrayBuffer -> world object, or null when it is not a world message.
  decodeWorld(buffer) {
    const v = new DataView(buffer);
    if (v.byteLength < 56 || v.getUint8(0) !== 0x57 || v.getUint8(1) !== Protocol.VERSION) {
      return null;
    }
    let at = 4;
    const u8 = () => v.getUint8(at++);
    const u16 = () => { const x = v.getUint16(at, true); at += 2; return x; };
    const u32 = () => { const x = v.getUint32(at, true); at += 4; return x; };
    const f32 = () => { const x = v.getFloat32(at, true); at += 4; return x; };
    const vec = () => [f32(), f32(), f32()];
    const quat = () => [f32(), f32(), f32(), f32()];
    const decoder = new TextDecoder();
    const name = () => {
      const n = u8();
      const s = decoder.decode(new Uint8Array(buffer, at, n));
      at += n;
      return s;
    };
    const w = {};
    w.seq = u32();
    w.frames = u32();
    w.serverTime = f32();
    w.gameTime = f32();
    w.playMode = u8();
    w.half = u8();
    w.scoreLeft = u16();
    w.scoreRight = u16();
    const robots = u16();
    w.ball = { pos: vec(), rot: quat() };
    w.teamLeft = name();
    w.teamRight = name();
    w.robots = [];
    for (let i = 0; i < robots; i++) {
      const r = {};
      r.id = u32();
      r.side = ["none", "left", "right"][u8()] || "none";
      r.unum = u8();
      r.type = u8();
      r.selected = (u8() & 1) === 1;
      const n = u8();
      r.parts = [];
      for (let k = 0; k < n; k++) {
        r.parts.push({ name: u8(), pos: vec(), rot: quat() });
      }
      w.robots.push(r);
    }
    return w;
  },
};
