// Small 3D math for the renderer: 4x4 matrices in column-major order (as
// WebGL expects), quaternions as [x, y, z, w]. Field frame: +x towards the
// right goal, +y to the left touch line seen from the left goal, +z up.
"use strict";

const M4 = {
  identity() {
    const m = new Float32Array(16);
    m[0] = m[5] = m[10] = m[15] = 1;
    return m;
  },

  // a * b
  multiply(a, b) {
    const m = new Float32Array(16);
    for (let col = 0; col < 4; col++) {
      for (let row = 0; row < 4; row++) {
        let s = 0;
        for (let k = 0; k < 4; k++) s += a[k * 4 + row] * b[col * 4 + k];
        m[col * 4 + row] = s;
      }
    }
    return m;
  },

  perspective(fovy, aspect, near, far) {
    const f = 1 / Math.tan(fovy / 2);
    const m = new Float32Array(16);
    m[0] = f / aspect;
    m[5] = f;
    m[10] = (far + near) / (near - far);
    m[11] = -1;
    m[14] = (2 * far * near) / (near - far);
    return m;
  },

  lookAt(eye, target, up) {
    let fx = target[0] - eye[0], fy = target[1] - eye[1], fz = target[2] - eye[2];
    let l = Math.hypot(fx, fy, fz) || 1;
    fx /= l; fy /= l; fz /= l;
    // right = forward x up
    let rx = fy * up[2] - fz * up[1], ry = fz * up[0] - fx * up[2], rz = fx * up[1] - fy * up[0];
    l = Math.hypot(rx, ry, rz) || 1;
    rx /= l; ry /= l; rz /= l;
    // true up = right x forward
    const ux = ry * fz - rz * fy, uy = rz * fx - rx * fz, uz = rx * fy - ry * fx;
    const m = new Float32Array(16);
    m[0] = rx; m[4] = ry; m[8] = rz;
    m[1] = ux; m[5] = uy; m[9] = uz;
    m[2] = -fx; m[6] = -fy; m[10] = -fz;
    m[12] = -(rx * eye[0] + ry * eye[1] + rz * eye[2]);
    m[13] = -(ux * eye[0] + uy * eye[1] + uz * eye[2]);
    m[14] = fx * eye[0] + fy * eye[1] + fz * eye[2];
    m[15] = 1;
    return m;
  },

  // Translation * rotation(q) * scale(s).
  compose(pos, q, s) {
    const [x, y, z, w] = q;
    const xx = x * x, yy = y * y, zz = z * z;
    const xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y, wz = w * z;
    const m = new Float32Array(16);
    m[0] = (1 - 2 * (yy + zz)) * s[0];
    m[1] = 2 * (xy + wz) * s[0];
    m[2] = 2 * (xz - wy) * s[0];
    m[4] = 2 * (xy - wz) * s[1];
    m[5] = (1 - 2 * (xx + zz)) * s[1];
    m[6] = 2 * (yz + wx) * s[1];
    m[8] = 2 * (xz + wy) * s[2];
    m[9] = 2 * (yz - wx) * s[2];
    m[10] = (1 - 2 * (xx + yy)) * s[2];
    m[12] = pos[0];
    m[13] = pos[1];
    m[14] = pos[2];
    m[15] = 1;
    return m;
  },

  // The 3x3 that turns local normals into world normals for compose(pos,
  // q, s): rotation * scale^-1.
  normalMatrix(q, s) {
    const r = M4.compose([0, 0, 0], q, [1 / s[0], 1 / s[1], 1 / s[2]]);
    return new Float32Array([r[0], r[1], r[2], r[4], r[5], r[6], r[8], r[9], r[10]]);
  },

  // Clip-space -> CSS pixels of a viewport; null behind the camera.
  project(viewProj, p, width, height) {
    const m = viewProj;
    const x = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
    const y = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
    const w = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
    if (w <= 1e-6) return null;
    return [((x / w) * 0.5 + 0.5) * width, (1 - ((y / w) * 0.5 + 0.5)) * height];
  },
};

const Q = {
  identity: [0, 0, 0, 1],

  // Rotates v by q.
  rotate(q, v) {
    const [x, y, z, w] = q;
    const tx = 2 * (y * v[2] - z * v[1]);
    const ty = 2 * (z * v[0] - x * v[2]);
    const tz = 2 * (x * v[1] - y * v[0]);
    return [
      v[0] + w * tx + (y * tz - z * ty),
      v[1] + w * ty + (z * tx - x * tz),
      v[2] + w * tz + (x * ty - y * tx),
    ];
  },

  // Rotation about +z by angle (radians).
  aboutZ(a) {
    return [0, 0, Math.sin(a / 2), Math.cos(a / 2)];
  },
};
