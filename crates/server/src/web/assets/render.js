// WebGL drawing of the field, the goals, the ball and the robots with
// simple shapes: boxes, spheres, capsules (a cylinder and two spheres).
// One shader, per-object colour, one directional light plus ambient.
"use strict";

const COLORS = {
  grass: [0.18, 0.55, 0.22],
  surround: [0.13, 0.42, 0.17],
  line: [0.95, 0.95, 0.95],
  ball: [1.0, 0.5, 0.0],
  left: [0.16, 0.36, 0.92],
  right: [0.92, 0.16, 0.12],
  none: [0.62, 0.62, 0.62],
  goalLeft: [0.95, 0.85, 0.1],
  goalRight: [0.35, 0.75, 0.95],
  net: [0.9, 0.9, 0.9],
};

// A darker shade of a team colour for joints and feet.
function shade(c, k) {
  return [c[0] * k, c[1] * k, c[2] * k];
}

const VERTEX_SHADER = `
attribute vec3 aPos;
attribute vec3 aNormal;
uniform mat4 uViewProj;
uniform mat4 uModel;
uniform mat3 uNormal;
varying vec3 vNormal;
void main() {
  vNormal = uNormal * aNormal;
  gl_Position = uViewProj * uModel * vec4(aPos, 1.0);
}`;

const FRAGMENT_SHADER = `
precision mediump float;
uniform vec4 uColor;
uniform vec3 uLight;
varying vec3 vNormal;
void main() {
  vec3 n = normalize(vNormal);
  float d = max(dot(n, uLight), 0.0);
  gl_FragColor = vec4(uColor.rgb * (0.55 + 0.45 * d), uColor.a);
}`;

class Renderer {
  constructor(canvas) {
    this.canvas = canvas;
    const gl = canvas.getContext("webgl", { antialias: true, alpha: false });
    if (!gl) throw new Error("this browser has no WebGL");
    this.gl = gl;
    this.program = this.link(VERTEX_SHADER, FRAGMENT_SHADER);
    const p = this.program;
    this.loc = {
      pos: gl.getAttribLocation(p, "aPos"),
      normal: gl.getAttribLocation(p, "aNormal"),
      viewProj: gl.getUniformLocation(p, "uViewProj"),
      model: gl.getUniformLocation(p, "uModel"),
      normalMat: gl.getUniformLocation(p, "uNormal"),
      color: gl.getUniformLocation(p, "uColor"),
      light: gl.getUniformLocation(p, "uLight"),
    };
    this.meshes = {
      box: this.upload(boxMesh()),
      sphere: this.upload(sphereMesh(10, 16)),
      cylinder: this.upload(cylinderMesh(16)),
    };
    this.ground = [];
    this.staticObjects = [];
    this.translucent = [];
  }

  link(vs, fs) {
    const gl = this.gl;
    const compile = (type, src) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, src);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    };
    const p = gl.createProgram();
    gl.attachShader(p, compile(gl.VERTEX_SHADER, vs));
    gl.attachShader(p, compile(gl.FRAGMENT_SHADER, fs));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    return p;
  }

  upload(mesh) {
    const gl = this.gl;
    const vbo = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, vbo);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(mesh.vertices), gl.STATIC_DRAW);
    const ibo = gl.createBuffer();
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ibo);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, new Uint16Array(mesh.indices), gl.STATIC_DRAW);
    return { vbo, ibo, count: mesh.indices.length };
  }

  // The static scene for a field description (hello.field).
  setField(f) {
    // Flat ground layers are drawn first, in order and without depth
    // (no z-fighting whatever the depth buffer's precision); the goals
    // then go with the robots.
    const ground = [];
    const objs = [];
    const trans = [];
    const flat = (pos, size, color, q) => ground.push(item("box", pos, q || Q.identity, size, color));
    const box = (pos, size, color, q) => objs.push(item("box", pos, q || Q.identity, size, color));
    const hl = f.length / 2, hw = f.width / 2;
    const lw = 0.05; // line width
    const lz = 0.004; // lines just above the grass
    // A straight line, in pieces of at most 1 m.
    const line = (x0, y0, x1, y1) => {
      const len = Math.hypot(x1 - x0, y1 - y0);
      const n = Math.max(1, Math.ceil(len));
      const q = Q.aboutZ(Math.atan2(y1 - y0, x1 - x0));
      for (let i = 0; i < n; i++) {
        const a = (i + 0.5) / n;
        flat([x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, lz], [len / n + 0.002, lw, 0.002], COLORS.line, q);
      }
    };
    flat([0, 0, -0.07], [f.length + 16, f.width + 14, 0.1], COLORS.surround);
    flat([0, 0, -0.01], [f.length + 1.2, f.width + 1.2, 0.02], COLORS.grass);
    // Outer lines, halfway line, centre spot.
    const e = lw / 2;
    line(-hl - e, hw, hl + e, hw);
    line(-hl - e, -hw, hl + e, -hw);
    line(hl, -hw - e, hl, hw + e);
    line(-hl, -hw - e, -hl, hw + e);
    line(0, -hw, 0, hw);
    flat([0, 0, lz], [0.1, 0.1, 0.002], COLORS.line);
    // Centre circle out of short segments.
    const segments = 48;
    for (let i = 0; i < segments; i++) {
      const a = ((i + 0.5) / segments) * 2 * Math.PI;
      const r = f.centreRadius;
      const seg = (2 * Math.PI * r) / segments + 0.01;
      flat([r * Math.cos(a), r * Math.sin(a), lz], [lw, seg, 0.002], COLORS.line, Q.aboutZ(a));
    }
    // Penalty areas.
    for (const s of [-1, 1]) {
      const x0 = s * hl, x1 = s * (hl - f.penaltyLength);
      const pw = f.penaltyWidth / 2;
      line(x1, -pw - e, x1, pw + e);
      line(x0, pw, x1, pw);
      line(x0, -pw, x1, -pw);
    }
    // Goals: posts and crossbar on the goal line, translucent net behind.
    const post = 0.05;
    const gw = f.goalWidth / 2, gd = f.goalDepth, gh = f.goalHeight;
    for (const s of [-1, 1]) {
      const color = s < 0 ? COLORS.goalLeft : COLORS.goalRight;
      const x = s * (hl + post / 2);
      for (const y of [-gw - post / 2, gw + post / 2]) box([x, y, gh / 2], [post, post, gh], color);
      box([x, 0, gh + post / 2], [post, 2 * gw + 2 * post, post], color);
      const back = s * (hl + gd);
      const net = (pos, size) => trans.push(item("box", pos, Q.identity, size, COLORS.net, 0.35));
      net([back, 0, gh / 2], [0.01, 2 * gw, gh]);
      net([s * (hl + gd / 2), gw, gh / 2], [gd, 0.01, gh]);
      net([s * (hl + gd / 2), -gw, gh / 2], [gd, 0.01, gh]);
      net([s * (hl + gd / 2), 0, gh], [gd, 2 * gw, 0.01]);
    }
    this.ground = ground;
    this.staticObjects = objs;
    this.translucent = trans;
  }

  // Objects for one world: the ball and every robot part.
  worldObjects(world, field, parts) {
    const objs = [];
    if (!world) return objs;
    const r = field.ballRadius;
    objs.push(item("sphere", world.ball.pos, world.ball.rot, [r, r, r], COLORS.ball));
    for (const robot of world.robots) {
      const team = COLORS[robot.side] || COLORS.none;
      const shapes = parts.types[robot.type] || parts.types[0] || [];
      for (const part of robot.parts) {
        const name = parts.names[part.name] || "";
        const shape = shapes[part.name] || { kind: "box", size: [0.04, 0.04, 0.04] };
        const color = partColor(name, team);
        pushShape(objs, shape, part.pos, part.rot, color);
      }
    }
    return objs;
  }

  draw(viewProj, objects) {
    const gl = this.gl;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.55, 0.7, 0.85, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.enable(gl.CULL_FACE);
    gl.useProgram(this.program);
    gl.uniformMatrix4fv(this.loc.viewProj, false, viewProj);
    const l = [0.35, -0.45, 0.82];
    const n = Math.hypot(...l);
    gl.uniform3f(this.loc.light, l[0] / n, l[1] / n, l[2] / n);
    gl.disable(gl.BLEND);
    gl.disable(gl.DEPTH_TEST);
    for (const o of this.ground) this.drawItem(o);
    gl.enable(gl.DEPTH_TEST);
    gl.depthMask(true);
    for (const o of this.staticObjects) this.drawItem(o);
    for (const o of objects) this.drawItem(o);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    gl.depthMask(false);
    for (const o of this.translucent) this.drawItem(o);
    gl.depthMask(true);
    gl.disable(gl.BLEND);
  }

  drawItem(o) {
    const gl = this.gl;
    const mesh = this.meshes[o.mesh];
    gl.bindBuffer(gl.ARRAY_BUFFER, mesh.vbo);
    gl.enableVertexAttribArray(this.loc.pos);
    gl.vertexAttribPointer(this.loc.pos, 3, gl.FLOAT, false, 24, 0);
    gl.enableVertexAttribArray(this.loc.normal);
    gl.vertexAttribPointer(this.loc.normal, 3, gl.FLOAT, false, 24, 12);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, mesh.ibo);
    gl.uniformMatrix4fv(this.loc.model, false, o.model);
    gl.uniformMatrix3fv(this.loc.normalMat, false, o.normal);
    gl.uniform4f(this.loc.color, o.color[0], o.color[1], o.color[2], o.alpha);
    gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_SHORT, 0);
  }
}

function item(mesh, pos, q, scale, color, alpha) {
  return {
    mesh,
    model: M4.compose(pos, q, scale),
    normal: M4.normalMatrix(q, scale),
    color,
    alpha: alpha === undefined ? 1 : alpha,
  };
}

// Team colour for the shell parts, darker for joints, feet and toes.
function partColor(name, team) {
  if (/foot|toe/.test(name)) return shade(team, 0.45);
  if (/shoulder|elbow|hip|ankle|neck/.test(name)) return shade(team, 0.6);
  return team;
}

function pushShape(objs, shape, pos, rot, color) {
  if (shape.kind === "box") {
    objs.push(item("box", pos, rot, shape.size, color));
  } else if (shape.kind === "sphere") {
    const r = shape.radius;
    objs.push(item("sphere", pos, rot, [r, r, r], color));
  } else if (shape.kind === "capsule") {
    const r = shape.radius, l = shape.length;
    objs.push(item("cylinder", pos, rot, [r, r, l], color));
    for (const s of [-1, 1]) {
      const off = Q.rotate(rot, [0, 0, (s * l) / 2]);
      objs.push(item("sphere", [pos[0] + off[0], pos[1] + off[1], pos[2] + off[2]], rot, [r, r, r], color));
    }
  }
}

// Unit cube centred on the origin, flat normals.
function boxMesh() {
  const v = [], idx = [];
  const faces = [
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[-1, 0, 0], [0, 0, 1], [0, 1, 0]],
    [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
    [[0, -1, 0], [1, 0, 0], [0, 0, 1]],
    [[0, 0, 1], [1, 0, 0], [0, 1, 0]],
    [[0, 0, -1], [0, 1, 0], [1, 0, 0]],
  ];
  for (const [n, a, b] of faces) {
    const base = v.length / 6;
    for (const [sa, sb] of [[-1, -1], [1, -1], [1, 1], [-1, 1]]) {
      for (let k = 0; k < 3; k++) v.push(0.5 * (n[k] + sa * a[k] + sb * b[k]));
      v.push(n[0], n[1], n[2]);
    }
    idx.push(base, base + 1, base + 2, base, base + 2, base + 3);
  }
  return { vertices: v, indices: idx };
}

// Unit sphere.
function sphereMesh(rings, sectors) {
  const v = [], idx = [];
  for (let i = 0; i <= rings; i++) {
    const t = (i / rings) * Math.PI;
    for (let j = 0; j <= sectors; j++) {
      const p = (j / sectors) * 2 * Math.PI;
      const x = Math.sin(t) * Math.cos(p), y = Math.sin(t) * Math.sin(p), z = Math.cos(t);
      v.push(x, y, z, x, y, z);
    }
  }
  for (let i = 0; i < rings; i++) {
    for (let j = 0; j < sectors; j++) {
      const a = i * (sectors + 1) + j, b = a + sectors + 1;
      idx.push(a, b, a + 1, a + 1, b, b + 1);
    }
  }
  return { vertices: v, indices: idx };
}

// Cylinder of radius 1 along z from -0.5 to 0.5, with caps.
function cylinderMesh(sectors) {
  const v = [], idx = [];
  for (let j = 0; j <= sectors; j++) {
    const p = (j / sectors) * 2 * Math.PI;
    const x = Math.cos(p), y = Math.sin(p);
    v.push(x, y, -0.5, x, y, 0, x, y, 0.5, x, y, 0);
  }
  for (let j = 0; j < sectors; j++) {
    const a = 2 * j;
    idx.push(a, a + 2, a + 1, a + 1, a + 2, a + 3);
  }
  for (const z of [-0.5, 0.5]) {
    const centre = v.length / 6;
    v.push(0, 0, z, 0, 0, Math.sign(z));
    for (let j = 0; j <= sectors; j++) {
      const p = (j / sectors) * 2 * Math.PI;
      v.push(Math.cos(p), Math.sin(p), z, 0, 0, Math.sign(z));
    }
    for (let j = 0; j < sectors; j++) {
      if (z > 0) idx.push(centre, centre + 1 + j, centre + 2 + j);
      else idx.push(centre, centre + 2 + j, centre + 1 + j);
    }
  }
  return { vertices: v, indices: idx };
}
