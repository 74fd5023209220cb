// The page: WebSocket to the server, camera, score bar, trainer buttons
// (live) or player controls (replay), and a small API on window.rcss3d for
// scripts and tests (state(), camera(), play/pause/seek/step/speed, send).
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const canvas = $("scene");
  const labels = $("labels");

  const app = {
    hello: null,
    world: null,
    connected: false,
    dirty: true,
    framesDrawn: 0,
    drawnSeq: -1,
    worldsReceived: 0,
    viewProj: M4.identity(),
    status: { playing: false, speed: 1, frame: 0 },
    lastAck: null,
    renderer: null,
    socket: null,
  };

  // Orbit camera around a target; "follow" keeps the target on the ball,
  // "top" looks straight down on the whole field.
  const cam = {
    mode: "orbit",
    target: [0, 0, 0],
    yaw: -Math.PI / 2,
    pitch: 0.62,
    distance: 24,
    fovy: (45 * Math.PI) / 180,
  };

  try {
    app.renderer = new Renderer(canvas);
  } catch (e) {
    showError("Cannot draw: " + e.message);
  }

  function showError(text) {
    const el = $("error");
    el.textContent = text;
    el.hidden = false;
  }

  function message(text, isError) {
    const el = $("message");
    el.textContent = text;
    el.classList.toggle("error", !!isError);
  }

  // ---- connection ------------------------------------------------------

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(proto + "//" + location.host + "/ws");
    ws.binaryType = "arraybuffer";
    app.socket = ws;
    $("connection").textContent = "connecting…";
    ws.onopen = () => {
      app.connected = true;
      $("connection").textContent = "connected";
    };
    ws.onclose = () => {
      app.connected = false;
      $("connection").textContent = "disconnected — retrying";
      setTimeout(connect, 2000);
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") {
        onText(JSON.parse(ev.data));
      } else {
        const w = Protocol.decodeWorld(ev.data);
        if (w) onWorld(w);
      }
    };
  }

  function send(obj) {
    if (app.socket && app.socket.readyState === WebSocket.OPEN) {
      app.socket.send(JSON.stringify(obj));
      return true;
    }
    message("not connected", true);
    return false;
  }

  function onText(m) {
    if (m.type === "hello") {
      app.hello = m;
      if (app.renderer) app.renderer.setField(m.field);
      setupControls(m);
      app.dirty = true;
    } else if (m.type === "status") {
      app.status = { playing: m.playing, speed: m.speed, frame: m.frame };
      $("play-pause").textContent = m.playing ? "Pause" : "Play";
    } else if (m.type === "ack") {
      app.lastAck = m;
      message(m.ok ? "done" : m.reason, !m.ok);
    }
  }

  function onWorld(w) {
    app.world = w;
    app.worldsReceived++;
    app.dirty = true;
    updateScorebar(w);
    if (app.hello && app.hello.mode === "replay") {
      const tl = $("timeline");
      tl.max = Math.max(0, w.frames - 1);
      if (!tl.matches(":active")) tl.value = w.seq;
      $("frame-label").textContent = (w.seq + 1) + " / " + w.frames;
    }
  }

  // ---- score bar ---------------------------------------------------------

  function clock(t) {
    const m = Math.floor(t / 60);
    const s = t - m * 60;
    return String(m).padStart(2, "0") + ":" + s.toFixed(1).padStart(4, "0");
  }

  function updateScorebar(w) {
    $("team-left").textContent = w.teamLeft || "Left";
    $("team-right").textContent = w.teamRight || "Right";
    $("score").textContent = w.scoreLeft + " : " + w.scoreRight;
    $("clock").textContent = clock(w.gameTime);
    $("half").textContent = w.half === 2 ? "2nd half" : "1st half";
    const modes = app.hello ? app.hello.playModes : [];
    $("playmode").textContent = modes[w.playMode] || "—";
    const sel = $("playmode-select");
    if (modes[w.playMode] && document.activeElement !== sel) sel.value = modes[w.playMode];
  }

  // ---- controls -----------------------------------------------------------

  function setupControls(h) {
    const live = h.mode === "live";
    $("trainer").hidden = !live;
    $("player").hidden = live;
    if (live) {
      const sel = $("playmode-select");
      sel.innerHTML = "";
      for (const name of h.playModes) {
        const o = document.createElement("option");
        o.value = o.textContent = name;
        sel.appendChild(o);
      }
      const allowed = h.trainer && h.trainer.allowed;
      for (const id of ["kickoff-left", "kickoff-right", "drop-ball", "playmode-select", "playmode-set"]) {
        $(id).disabled = !allowed;
        $(id).title = allowed ? "" : h.trainer.reason;
      }
      if (!allowed) message("trainer commands off: " + h.trainer.reason);
    } else {
      document.title = "rcss3d — " + h.replay.file;
      $("timeline").max = Math.max(0, h.replay.frames - 1);
    }
  }

  $("kickoff-left").onclick = () => send({ cmd: "kickOff", side: "Left" });
  $("kickoff-right").onclick = () => send({ cmd: "kickOff", side: "Right" });
  $("drop-ball").onclick = () => send({ cmd: "dropBall" });
  $("playmode-set").onclick = () => send({ cmd: "playMode", mode: $("playmode-select").value });
  $("play-pause").onclick = () => send({ cmd: app.status.playing ? "pause" : "play" });
  $("step-back").onclick = () => send({ cmd: "step", delta: -1 });
  $("step-forward").onclick = () => send({ cmd: "step", delta: 1 });
  $("timeline").oninput = (ev) => send({ cmd: "seek", frame: Number(ev.target.value) });
  $("speed").onchange = (ev) => send({ cmd: "speed", value: Number(ev.target.value) });
  $("cam-orbit").onclick = () => setCamera({ mode: "orbit" });
  $("cam-follow").onclick = () => setCamera({ mode: "follow", distance: 6 });
  $("cam-top").onclick = () => setCamera({ mode: "top" });

  document.addEventListener("keydown", (ev) => {
    if (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT") return;
    const k = ev.key.toLowerCase();
    if (k === "o") setCamera({ mode: "orbit" });
    else if (k === "b") setCamera({ mode: "follow", distance: 6 });
    else if (k === "t") setCamera({ mode: "top" });
    else if (app.hello && app.hello.mode === "replay") {
      if (k === " ") { $("play-pause").click(); ev.preventDefault(); }
      else if (k === "arrowleft") send({ cmd: "step", delta: -1 });
      else if (k === "arrowright") send({ cmd: "step", delta: 1 });
    }
  });

  // ---- camera ---------------------------------------------------------------

  function setCamera(c) {
    if (c.mode) cam.mode = c.mode;
    for (const k of ["yaw", "pitch", "distance"]) if (typeof c[k] === "number") cam[k] = c[k];
    if (Array.isArray(c.target)) cam.target = c.target.slice(0, 3);
    if (cam.mode === "top") cam.target = [0, 0, 0];
    for (const [id, mode] of [["cam-orbit", "orbit"], ["cam-follow", "follow"], ["cam-top", "top"]]) {
      $(id).classList.toggle("active", cam.mode === mode);
    }
    app.dirty = true;
  }

  function viewMatrices() {
    const w = Math.max(1, canvas.clientWidth), h = Math.max(1, canvas.clientHeight);
    const aspect = w / h;
    let eye, up = [0, 0, 1];
    let target = cam.target;
    if (cam.mode === "follow" && app.world) target = app.world.ball.pos.slice();
    if (cam.mode === "top") {
      const f = app.hello ? app.hello.field : { length: 30, width: 20, goalDepth: 0.6 };
      const t = Math.tan(cam.fovy / 2);
      // Room beyond the touch lines for the robots the referee puts 0.5 m
      // outside and the first row of robots waiting 1.5 m behind the -y
      // line, framed at a standing robot's head height (0.6 m).
      const halfX = f.length / 2 + f.goalDepth + 0.8, halfY = f.width / 2 + 2.2;
      const d = Math.max(halfY / t, halfX / (t * aspect)) + 0.6;
      eye = [0, 0, d];
      target = [0, 0, 0];
      up = [0, 1, 0];
    } else {
      const cp = Math.cos(cam.pitch);
      eye = [
        target[0] + cam.distance * cp * Math.cos(cam.yaw),
        target[1] + cam.distance * cp * Math.sin(cam.yaw),
        target[2] + cam.distance * Math.sin(cam.pitch),
      ];
    }
    const dist = Math.hypot(eye[0] - target[0], eye[1] - target[1], eye[2] - target[2]);
    const near = Math.max(0.05, dist / 400), far = dist + 200;
    const proj = M4.perspective(cam.fovy, aspect, near, far);
    return M4.multiply(proj, M4.lookAt(eye, target, up));
  }

  let drag = null;
  canvas.addEventListener("contextmenu", (ev) => ev.preventDefault());
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, y: ev.clientY, pan: ev.button === 2 || ev.shiftKey };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    drag.x = ev.clientX;
    drag.y = ev.clientY;
    if (cam.mode === "top") setCamera({ mode: "orbit", pitch: 1.45, distance: 30, target: [0, 0, 0] });
    if (drag.pan) {
      if (cam.mode === "follow") setCamera({ mode: "orbit", target: app.world ? app.world.ball.pos : cam.target });
      const k = cam.distance * 0.0015;
      const c = Math.cos(cam.yaw), s = Math.sin(cam.yaw);
      // Screen right is (-sin yaw, cos yaw); screen up on the ground is -(cos, sin).
      cam.target = [
        cam.target[0] - dx * k * -s + dy * k * -c,
        cam.target[1] - dx * k * c + dy * k * -s,
        cam.target[2],
      ];
    } else {
      cam.yaw -= dx * 0.006;
      cam.pitch = Math.min(1.55, Math.max(0.05, cam.pitch + dy * 0.006));
    }
    app.dirty = true;
  });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    if (cam.mode === "top") setCamera({ mode: "orbit", pitch: 1.45, distance: 30, target: [0, 0, 0] });
    cam.distance = Math.min(120, Math.max(0.5, cam.distance * Math.pow(1.0015, ev.deltaY)));
    app.dirty = true;
  }, { passive: false });
  window.addEventListener("resize", () => { app.dirty = true; });

  // ---- drawing ----------------------------------------------------------------

  function drawLabels() {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (labels.width !== Math.round(w * dpr) || labels.height !== Math.round(h * dpr)) {
      labels.width = Math.round(w * dpr);
      labels.height = Math.round(h * dpr);
    }
    const g = labels.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    if (!app.world || !app.hello) return;
    g.font = "bold 13px system-ui, sans-serif";
    g.textAlign = "center";
    g.textBaseline = "bottom";
    g.lineWidth = 3;
    const torso = app.hello.parts.names.indexOf("torso");
    for (const r of app.world.robots) {
      if (!r.unum) continue;
      const t = r.parts.find((p) => p.name === torso) || r.parts[0];
      if (!t) continue;
      const p = M4.project(app.viewProj, [t.pos[0], t.pos[1], t.pos[2] + 0.35], w, h);
      if (!p) continue;
      // Well above the robot, so the number never hides it.
      const y = p[1] - 16;
      g.strokeStyle = "rgba(0,0,0,0.7)";
      g.strokeText(String(r.unum), p[0], y);
      g.fillStyle = r.side === "left" ? "#9db8ff" : r.side === "right" ? "#ffaaa2" : "#dddddd";
      g.fillText(String(r.unum), p[0], y);
    }
  }

  function frame() {
    requestAnimationFrame(frame);
    const following = cam.mode === "follow";
    if (!app.dirty && !following) return;
    if (!app.renderer || !app.hello) return;
    app.dirty = false;
    app.viewProj = viewMatrices();
    const objects = app.renderer.worldObjects(app.world, app.hello.field, app.hello.parts);
    app.renderer.draw(app.viewProj, objects);
    drawLabels();
    app.framesDrawn++;
    app.drawnSeq = app.world ? app.world.seq : -1;
  }
  requestAnimationFrame(frame);

  // ---- API for scripts and tests -------------------------------------------------

  window.rcss3d = {
    // Everything the page knows and shows, as plain data.
    state() {
      const w = app.world;
      const names = app.hello ? app.hello.parts.names : [];
      const torso = names.indexOf("torso");
      const rect = canvas.getBoundingClientRect();
      return {
        connected: app.connected,
        mode: app.hello ? app.hello.mode : null,
        trainer: app.hello ? app.hello.trainer : null,
        field: app.hello ? app.hello.field : null,
        worldsReceived: app.worldsReceived,
        seq: w ? w.seq : -1,
        frames: w ? w.frames : 0,
        gameTime: w ? w.gameTime : 0,
        playMode: w && app.hello ? app.hello.playModes[w.playMode] || null : null,
        half: w ? w.half : 0,
        score: w ? [w.scoreLeft, w.scoreRight] : [0, 0],
        teams: w ? [w.teamLeft, w.teamRight] : ["", ""],
        ball: w ? w.ball.pos : null,
        robots: w
          ? w.robots.map((r) => {
              const t = r.parts.find((p) => p.name === torso);
              return {
                id: r.id, side: r.side, unum: r.unum, type: r.type,
                parts: r.parts.map((p) => ({ name: names[p.name] || null, pos: p.pos })),
                torso: t ? t.pos : null,
              };
            })
          : [],
        camera: {
          mode: cam.mode,
          viewProj: Array.from(app.viewProj),
          rect: { left: rect.left, top: rect.top, width: rect.width, height: rect.height },
        },
        drawnSeq: app.drawnSeq,
        framesDrawn: app.framesDrawn,
        replay: app.status,
        lastAck: app.lastAck,
      };
    },
    camera: setCamera,
    send,
    play: () => send({ cmd: "play" }),
    pause: () => send({ cmd: "pause" }),
    step: (delta) => send({ cmd: "step", delta }),
    seek: (frame) => send({ cmd: "seek", frame }),
    speed: (value) => send({ cmd: "speed", value }),
  };

  // #camera=top|follow|orbit picks the first camera (for bookmarks).
  const wanted = /camera=(top|follow|orbit)/.exec(location.hash);
  if (wanted) setCamera({ mode: wanted[1], distance: wanted[1] === "follow" ? 6 : cam.distance });

  connect();
})();
