//! Inputs found by fuzzing and by reading the untrusted paths, one test
//! each, named after the behaviour they pin down.
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
use rcss3d::net::client::AgentClient;
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

/// The simulation thread (`app::run`) and tokio workers run with
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
// argument is substituted into `(eval "NaoType[" $type "]['UseToe']")`, and
// the scene evaluator parses that expression by recursive descent
// (`ExprParser::unary` / `atom` in crates/core/src/sim/scene/expr.rs) on the simulation
// thread. Only small canonical integers are accepted as scene arguments, so
// an agent cannot make the evaluator recurse without bound (one 1 MiB frame
// would overflow the stack and abort the whole server) nor cache another
// model under every new spelling of a type ("00", "+0", "1-1").

const NAO_HETERO: &str = "rsg/agent/nao/nao_hetero.rsg";

fn resolve_on_server_stack(arg: String) -> bool {
    on_server_sized_stack(move || {
        let lib = ModelLibrary::built_in().expect("models load");
        lib.resolve(NAO_HETERO, &[arg]).is_ok()
    })
}

#[test]
fn scene_type_arg_small_integers_resolve() {
    // Control for the two tests below: the normal types resolve.
    assert!(resolve_on_server_stack("0".into()));
    assert!(resolve_on_server_stack("4".into()));
    assert!(!resolve_on_server_stack("5".into()));
}

#[test]
fn scene_type_arg_of_many_minus_signs_does_not_crash() {
    isolated("scene_type_arg_of_many_minus_signs_does_not_crash", || {
        // 200 000 unary minus signs, then the robot type: a 200 kB frame.
        let arg = format!("{}0", "-".repeat(200_000));
        // Any answer is fine (refusing is expected); aborting is not.
        let _ = resolve_on_server_stack(arg);
    });
}

#[test]
fn scene_type_arg_of_deep_parentheses_does_not_crash() {
    isolated("scene_type_arg_of_deep_parentheses_does_not_crash", || {
        let arg = format!("{}0{}", "(".repeat(100_000), ")".repeat(100_000));
        let _ = resolve_on_server_stack(arg);
    });
}

#[test]
fn scene_type_arg_deep_expression_from_an_agent_leaves_the_server_running() {
    // The same input through the real server and a socket: the witness
    // agent must keep receiving frames after the bad agent's scene.
    isolated(
        "scene_type_arg_deep_expression_from_an_agent_leaves_the_server_running",
        || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                let cfg = rcss3d::config::Config {
                    bind: [127, 0, 0, 1].into(),
                    sync_mode: false,
                    real_time: true,
                    seed: Some(7),
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
                let server = tokio::spawn(rcss3d::app::run(
                    Arc::new(cfg),
                    agents,
                    monitors,
                    async move {
                        let _ = stop_rx.await;
                    },
                ));
                let mut bad = AgentClient::connect(addr).await.expect("connect");
                let msg = format!("(scene {NAO_HETERO} {}0)", "-".repeat(200_000));
                bad.send(&msg).await.expect("send");
                let mut witness = AgentClient::connect(addr).await.expect("connect");
                witness
                    .send(&format!("(scene {NAO_HETERO} 0)"))
                    .await
                    .expect("send");
                // 100 frames = 2 s of real-time play after the bad scene.
                for _ in 0..100 {
                    tokio::time::timeout(std::time::Duration::from_secs(5), witness.recv())
                        .await
                        .expect("a frame within 5 s")
                        .expect("server still up")
                        .expect("a whole frame");
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
fn agent_sexp_deep_nesting_is_an_error() {
    isolated("agent_sexp_deep_nesting_is_an_error", || {
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
fn monitor_command_deep_nesting_is_an_error() {
    isolated("monitor_command_deep_nesting_is_an_error", || {
        let mut deep = "(ball ".repeat(1_000_000).into_bytes();
        deep.extend(std::iter::repeat_n(b')', 1_000_000));
        let errs = on_server_sized_stack(move || {
            parse_commands(&deep).iter().filter(|r| r.is_err()).count()
        });
        assert!(errs >= 1);
    });
}

#[test]
fn scene_text_deep_nesting_does_not_crash_the_reader() {
    // parse_sexps is iterative and refuses lists nested beyond its limit
    // with a line naming it, on a 2 MiB stack as the server's threads
    // have, where a recursive reader or drop would overflow at 20 000
    // levels.
    isolated("scene_text_deep_nesting_does_not_crash_the_reader", || {
        let text = format!(
            "(RSG 0 1)\n({}{})",
            "(nd Transform ".repeat(20_000),
            ")".repeat(20_000)
        );
        let err = on_server_sized_stack(move || {
            parse_sexps(&Arc::from("deep.rsg"), &text)
                .err()
                .map(|e| e.to_string())
        });
        let err = err.expect("20 000 levels are refused");
        assert!(
            err.contains("deep.rsg") && err.contains("nested more than"),
            "the error names the file and the nesting: {err}"
        );
    });
}

#[test]
fn scene_type_spellings_do_not_each_cache_a_model() {
    let lib = ModelLibrary::built_in().expect("models load");
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
// Robots started inside each other. The contact solver answers deep
// overlaps with huge impulses; without the speed cap and the run-away guard
// in `World::step` one bad contact sends a body kilometres away, its
// bounding box then spans millions of broad-phase regions and the server's
// memory grows by hundreds of MB per second. The soak's chaos agents reach
// this state; 12 robots started in one spot reproduce it in a few steps.

/// 12 robots of all types started in one spot, stepped for 200 cycles;
/// returns the farthest any part got from the centre (m), or the first
/// non-finite position.
fn robots_started_inside_each_other() -> Result<f32, String> {
    use nalgebra::Vector3;
    use rcss3d::sim::world::World;
    let cfg = rcss3d::config::Config::embedded().expect("config");
    let mut w = World::new(&cfg.physics, cfg.step).expect("world");
    let lib = ModelLibrary::built_in().expect("models");
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

/// Every part stays finite and within 30 m of the centre: the robots are
/// neither lost to a run-away nor flung off the field.
#[test]
fn robots_started_inside_each_other_stay_on_the_field() {
    isolated("robots_started_inside_each_other_stay_on_the_field", || {
        let far = robots_started_inside_each_other().unwrap_or_else(|e| panic!("{e}"));
        assert!(far < 30.0, "a part got {far} m from the centre");
    });
}
