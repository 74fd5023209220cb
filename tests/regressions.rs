//! Issue 7: inputs found by fuzzing and by reading the untrusted paths, one
//! test each, named after what they found.
//!
//! A crash in these paths is usually a stack overflow, which aborts the
//! whole process instead of failing one test. So each body runs in a child
//! process (this same test binary, re-run on one test with
//! `RCSS3D_REGRESSION_CHILD` set): a crash there fails only its test, with
//! the child's stderr in the message.

use std::process::Command;
use std::sync::Arc;

use rcss3d::command::decode_all;
use rcss3d::monitor::command::parse_commands;
use rcss3d::sexp::parse;
use rcss3d::sim::model::ModelLibrary;
use rcss3d::sim::scene::parse_sexps;

/// Runs `body` in a child process when called from the parent, directly
/// when called in the child. `name` is the test's own function name.
fn isolated(name: &str, body: impl FnOnce()) {
    const CHILD: &str = "RCSS3D_REGRESSION_CHILD";
    if std::env::var_os(CHILD).is_some() {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([
            name,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("run the test binary again");
    assert!(
        out.status.success(),
        "{name} failed in its child process ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The simulation thread (`net::server::run`) and tokio workers run with
/// std's default 2 MiB stack; run a body on a thread of that size so a
/// recursion that would only overflow there overflows here too.
fn on_server_sized_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic")
}

// ---------------------------------------------------------------------------
// Agent robot type: `(scene rsg/agent/nao/nao_hetero.rsg <arg>)`. The
// argument is substituted into `(eval "NaoType[" $type "]['UseToe']")`, so an
// agent writes an expression the scene evaluator parses by recursive descent
// (`ExprParser::unary` / `atom` in src/sim/scene.rs), which had nothing
// bounding the depth: one frame (up to 1 MiB) from any agent aborted the
// whole server with a stack overflow on the simulation thread
// (`Simulation::execute_scenes` -> `ModelLibrary::resolve`), and every new
// spelling of a type ("00", "+0", "1-1") cached another model. Fixed by
// accepting only small canonical integers as scene arguments.

const NAO_HETERO: &str = "rsg/agent/nao/nao_hetero.rsg";

fn resolve_on_server_stack(arg: String) -> bool {
    on_server_sized_stack(move || {
        let lib = ModelLibrary::load(ModelLibrary::default_dir()).expect("models load");
        lib.resolve(NAO_HETERO, &[arg]).is_ok()
    })
}

#[test]
fn issue7_scene_type_arg_plain_numbers_still_work() {
    // Control for the two tests below: the normal types resolve.
    assert!(resolve_on_server_stack("0".into()));
    assert!(resolve_on_server_stack("4".into()));
    assert!(!resolve_on_server_stack("5".into()));
}

#[test]

fn issue7_scene_type_arg_many_minus_signs_overflow_eval() {
    isolated(
        "issue7_scene_type_arg_many_minus_signs_overflow_eval",
        || {
            // 200 000 unary minus signs, then the robot type: a 200 kB frame.
            let arg = format!("{}0", "-".repeat(200_000));
            // Any answer is fine (refusing is expected); aborting is not.
            let _ = resolve_on_server_stack(arg);
        },
    );
}

#[test]
fn issue7_scene_type_arg_deep_parentheses_overflow_eval() {
    isolated(
        "issue7_scene_type_arg_deep_parentheses_overflow_eval",
        || {
            let arg = format!("{}0{}", "(".repeat(100_000), ")".repeat(100_000));
            let _ = resolve_on_server_stack(arg);
        },
    );
}

#[test]
fn issue7_scene_type_arg_deep_eval_through_a_real_agent() {
    // The same input through the real server and a socket: the witness
    // agent must keep receiving frames after the bad agent's scene.
    isolated(
        "issue7_scene_type_arg_deep_eval_through_a_real_agent",
        || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let cfg = rcss3d::config::Config {
                    bind: [127, 0, 0, 1].into(),
                    sync_mode: false,
                    real_time: true,
                    seed: 7,
                    ..Default::default()
                };
                let agents = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let monitors = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let addr = agents.local_addr().expect("addr");
                let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
                let server = tokio::spawn(rcss3d::net::server::run(
                    Arc::new(cfg),
                    agents,
                    monitors,
                    async move {
                        let _ = stop_rx.await;
                    },
                ));
                let frame = |m: &str| {
                    let mut b = (m.len() as u32).to_be_bytes().to_vec();
                    b.extend_from_slice(m.as_bytes());
                    b
                };
                let mut bad = tokio::net::TcpStream::connect(addr).await.expect("connect");
                let msg = format!("(scene {NAO_HETERO} {}0)", "-".repeat(200_000));
                bad.write_all(&frame(&msg)).await.expect("send");
                let mut witness = tokio::net::TcpStream::connect(addr).await.expect("connect");
                witness
                    .write_all(&frame(&format!("(scene {NAO_HETERO} 0)")))
                    .await
                    .expect("send");
                // 100 frames = 2 s of real-time play after the bad scene.
                for _ in 0..100 {
                    let mut len = [0u8; 4];
                    tokio::time::timeout(
                        std::time::Duration::from_secs(5),
                        witness.read_exact(&mut len),
                    )
                    .await
                    .expect("a frame within 5 s")
                    .expect("server still up");
                    let mut buf = vec![0u8; u32::from_be_bytes(len) as usize];
                    witness.read_exact(&mut buf).await.expect("frame body");
                }
                let _ = stop_tx.send(());
                let _ = tokio::time::timeout(std::time::Duration::from_secs(20), server).await;
            });
        },
    );
}

// ---------------------------------------------------------------------------
// Deep nesting in the parsers that take untrusted input: each has a depth
// limit; these pin it down so a refactor cannot lose it.

#[test]
fn issue7_agent_sexp_deep_nesting_is_an_error() {
    isolated("issue7_agent_sexp_deep_nesting_is_an_error", || {
        let mut deep = "(a ".repeat(1_000_000).into_bytes();
        deep.extend(std::iter::repeat_n(b')', 1_000_000));
        let p = on_server_sized_stack(move || {
            let p = parse(&deep);
            let _ = decode_all(&p);
            p.error.is_some()
        });
        assert!(p);
    });
}

#[test]
fn issue7_monitor_command_deep_nesting_is_an_error() {
    isolated("issue7_monitor_command_deep_nesting_is_an_error", || {
        let mut deep = "(ball ".repeat(1_000_000).into_bytes();
        deep.extend(std::iter::repeat_n(b')', 1_000_000));
        let errs = on_server_sized_stack(move || {
            parse_commands(&deep).iter().filter(|r| r.is_err()).count()
        });
        assert!(errs >= 1);
    });
}

#[test]
fn issue7_scene_text_deep_nesting_does_not_crash_the_reader() {
    // parse_sexps is iterative; dropping the deep tree it returns used to
    // recurse and overflow a 2 MiB stack at 20 000 levels (scene::Sexp now
    // drops iteratively).
    isolated(
        "issue7_scene_text_deep_nesting_does_not_crash_the_reader",
        || {
            let text = format!(
                "(RSG 0 1)\n({}{})",
                "(nd Transform ".repeat(20_000),
                ")".repeat(20_000)
            );
            let ok =
                on_server_sized_stack(move || parse_sexps(&Arc::from("deep.rsg"), &text).is_ok());
            assert!(ok);
        },
    );
}

#[test]
fn issue7_scene_type_spellings_do_not_each_cache_a_model() {
    let lib = ModelLibrary::load(ModelLibrary::default_dir()).expect("models load");
    let type0 = lib.resolve(NAO_HETERO, &["0".into()]).expect("type 0");
    // Each spelling must either be refused or give the same (cached) model.
    for spelling in ["00", "0.0", "+0", "1-1", "(0)", &"0".repeat(10_000)] {
        if let Ok(m) = lib.resolve(NAO_HETERO, &[spelling.to_string()]) {
            assert!(
                Arc::ptr_eq(&m, &type0),
                "robot type written as {:?} built and cached a second model",
                &spelling[..spelling.len().min(20)]
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Physics blow-up. Found by the 30-minute soak (src/bin/soak.rs, release,
// 22 agents + chaos): after 21 minutes the simulation thread stopped
// inside rapier's broad phase (`SAPLayer::ensure_region_exists`, called
// from `World::step`, src/sim/world.rs) and the server's RSS grew by about
// 300 MB/s to 20 GB: the symptom of a body whose position or velocity ran
// away, so that its bounding box spans millions of broad-phase regions.
// Robots started inside each other reproduce the run-away in a few steps.
// Nothing checks the bodies after a step, so one bad contact takes the
// whole server (and the machine's memory) down.

/// 12 robots of all types started in one spot, stepped for 200 cycles;
/// returns the farthest any part got from the centre (m), or the first
/// non-finite position.
fn robots_started_inside_each_other() -> Result<f32, String> {
    use nalgebra::Vector3;
    use rcss3d::sim::world::World;
    let cfg = rcss3d::config::Config::embedded().expect("config");
    let mut w = World::new(&cfg.physics).expect("world");
    let lib = ModelLibrary::load(ModelLibrary::default_dir()).expect("models");
    for i in 0..12 {
        let m = lib
            .resolve(NAO_HETERO, &[(i % 5).to_string()])
            .expect("model");
        w.add_robot(m, Vector3::new(0.0, 0.0, 0.4), 30.0 * i as f32);
    }
    let mut farthest = 0.0f32;
    for step in 0..200 {
        w.step();
        for h in w.robots() {
            for p in 0..w.robot_model(h).parts.len() {
                let t = w.part_pose(h, p).translation.vector;
                if !t.iter().all(|x| x.is_finite()) {
                    return Err(format!("step {step}: robot {h:?} part {p} at {t:?}"));
                }
                farthest = farthest.max(t.norm());
            }
        }
    }
    Ok(farthest)
}

#[test]
fn issue7_robots_started_inside_each_other_stay_bounded() {
    // The run-away itself: before the velocity cap in World::step a torso
    // was 2 km away after 53 steps and still accelerating.
    isolated(
        "issue7_robots_started_inside_each_other_stay_bounded",
        || {
            let far = robots_started_inside_each_other().unwrap_or_else(|e| panic!("{e}"));
            assert!(far < 1000.0, "a part got {far} m from the centre");
        },
    );
}

#[test]
fn issue7_robots_started_inside_each_other_are_not_flung_off_the_field() {
    isolated(
        "issue7_robots_started_inside_each_other_are_not_flung_off_the_field",
        || {
            let far = robots_started_inside_each_other().unwrap_or_else(|e| panic!("{e}"));
            assert!(far < 30.0, "a part got {far} m from the centre");
        },
    );
}
