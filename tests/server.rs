//! The agent TCP server, the protocol layer and the simulation
//! loop, driven over real sockets.

mod util;

use std::time::{Duration, Instant};

use rcss3d::net::client::frame;
use util::{joint, now, shape, test_config, TestServer};

/// The perceptor sequence of a type 0 frame without the optional parts.
fn core_shape(frame: &str) -> Vec<String> {
    shape(frame)
        .into_iter()
        .filter(|t| t != "See" && t != "hear" && !t.starts_with("FRP"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_scene_init_beam_play_leave() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    let first = a.create(0).await;
    // First frame: time, GS without identity, GYR, ACC, 22 HJ.
    assert!(first.starts_with("(time (now "), "{first}");
    assert!(
        first.contains("(GS (sl 0) (sr 0) (t 0.00) (pm BeforeKickOff))"),
        "{first}"
    );
    let hj = core_shape(&first)
        .iter()
        .filter(|t| t.starts_with("HJ:"))
        .count();
    assert_eq!(hj, 22, "{first}");
    assert!(!first.contains("(unum"), "{first}");

    a.send("(init (unum 0)(teamname Alpha))(syn)").await;
    let mut identity = 0;
    let mut frames = Vec::new();
    for _ in 0..6 {
        let f = a.recv().await;
        if f.contains("(GS (unum 1) (team left) (sl 0) (sr 0)") {
            identity += 1;
        }
        frames.push(f);
        a.send("(syn)").await;
    }
    assert_eq!(identity, 1, "unum/team exactly once: {frames:#?}");

    // Beam, then play a few cycles: time advances 0.02 per frame.
    a.send("(beam -3 1 0)(syn)").await;
    let mut last = now(&a.recv().await);
    for _ in 0..10 {
        let f = a.cycle("(he1 1.0)").await;
        let t = now(&f);
        assert!((t - last - 0.02).abs() < 0.011, "time {last} -> {t}");
        last = t;
    }
    // A second agent joins the other team; the first one leaves; the second
    // goes on undisturbed.
    let a = a.autosync();
    let mut b = server.agent().await;
    let (side, unum) = b.join("Beta", 0, 0).await;
    assert_eq!((side.as_str(), unum), ("right", 1));
    a.abort();
    let mut t = now(&b.cycle("").await);
    for _ in 0..20 {
        let f = b.cycle("").await;
        assert!(now(&f) > t);
        t = now(&f);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teams_of_eleven_and_a_third_team() {
    let server = TestServer::start(test_config()).await;
    let types = [0u8, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4];
    let mut syncing = Vec::new();
    for team in ["Home", "Away"] {
        for (i, t) in types.iter().enumerate() {
            let mut a = server.agent().await;
            let (side, unum) = a.join(team, i as u8 + 1, *t).await;
            assert_eq!(side, if team == "Home" { "left" } else { "right" });
            assert_eq!(unum, i as u8 + 1);
            syncing.push(a.autosync());
        }
    }
    let mut agents = util::AutoSync::stop_all(syncing).await;
    // Lockstep for a few cycles with all 22: everybody gets the frame of
    // the same cycle.
    for _ in 0..5 {
        for a in agents.iter_mut() {
            a.send("(syn)").await;
        }
        let mut times = Vec::new();
        for a in agents.iter_mut() {
            times.push(now(&a.recv().await));
        }
        assert!(times.windows(2).all(|w| w[0] == w[1]), "{times:?}");
    }
    // A third team gets no team (no unum in GS), while the 22 play on.
    let syncing: Vec<_> = agents.into_iter().map(|a| a.autosync()).collect();
    let mut c = server.agent().await;
    c.create(0).await;
    c.send("(init (unum 1)(teamname Third))(syn)").await;
    for _ in 0..4 {
        let f = c.recv().await;
        assert!(!f.contains("(unum"), "third team must not join: {f}");
        c.send("(syn)").await;
    }
    drop(c);
    util::AutoSync::stop_all(syncing).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_mode_waits_for_syn() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Sync", 1, 0).await;
    for _ in 0..8 {
        a.cycle("").await;
    }
    // Answer without (syn): an agent in lockstep is waited for until it
    // sends its (syn).
    a.send("(he1 0.5)").await;
    assert!(
        a.try_recv(Duration::from_millis(600)).await.is_none(),
        "server stepped without (syn)"
    );
    let before = Instant::now();
    a.send("(syn)").await;
    a.recv().await;
    assert!(before.elapsed() < Duration::from_secs(5));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_time_mode_paces_by_the_wall_clock() {
    let mut cfg = test_config();
    cfg.sync_mode = false;
    cfg.real_time = true;
    let server = TestServer::start(cfg).await;
    let mut a = server.agent().await;
    a.create(0).await;
    // 25 frames cannot arrive in less than 24 cycles of 20 ms, however fast
    // the machine; the clock advances 0.02 per frame.
    let start = Instant::now();
    let mut times = Vec::new();
    for _ in 0..25 {
        times.push(now(&a.recv().await));
    }
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(470),
        "25 frames in {elapsed:?}"
    );
    for w in times.windows(2) {
        assert!((w[1] - w[0] - 0.02).abs() < 0.011, "{times:?}");
    }
    server.stop().await;
}

/// A command computed from frame N drives physics step N+2
/// (docs/protocol.md#the-cycle); its effect is reported in frame N+2, not in
/// frame N+1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_take_effect_two_steps_later() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Lat", 1, 0).await;
    for _ in 0..10 {
        a.cycle("").await;
    }
    let f_n = a.cycle("").await;
    let base = joint(&f_n, "hj1");
    // Computed from F_N:
    a.send("(he1 6.1395)(syn)").await;
    let f_n1 = a.recv().await;
    a.send("(syn)").await;
    let f_n2 = a.recv().await;
    assert!(
        (joint(&f_n1, "hj1") - base).abs() < 0.5,
        "F_N+1 must not show the command yet"
    );
    assert!(
        joint(&f_n2, "hj1") - base > 3.0,
        "F_N+2 shows the command: {} -> {}",
        base,
        joint(&f_n2, "hj1")
    );
    server.stop().await;
}

/// What an agent sent to the reference, replayed: our answers have the
/// same perceptor sequence and field shapes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_transcript_has_reference_shapes() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference/transcripts"
    );
    let sent =
        std::fs::read_to_string(format!("{dir}/sync_agent_sent_first13.txt")).expect("transcript");
    let reference =
        std::fs::read_to_string(format!("{dir}/sync_agent_first10.txt")).expect("transcript");
    let reference: Vec<&str> = reference.lines().collect();
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    let mut ours = Vec::new();
    for msg in sent.lines().take(reference.len()) {
        a.send(msg).await;
        ours.push(a.recv().await);
    }
    for (i, (o, r)) in ours.iter().zip(&reference).enumerate() {
        assert_eq!(
            core_shape(o),
            core_shape(r),
            "message {}:\nours {o}\nref  {r}",
            i + 1
        );
        assert_eq!(
            o.contains("(unum 1) (team left)"),
            r.contains("(unum 1) (team left)"),
            "message {}",
            i + 1
        );
        // Field shapes of the fixed perceptors.
        for tag in ["(GYR (n torso) (rt ", "(ACC (n torso) (a "] {
            let f = |s: &str| {
                let i = s.find(tag).expect(tag) + tag.len();
                s[i..i + s[i..].find(')').expect(")")].split(' ').count()
            };
            assert_eq!(f(o), f(r));
        }
    }
    // Vision every third frame, as in the reference.
    let see: Vec<bool> = ours.iter().map(|f| f.contains("(See ")).collect();
    let n = see.iter().filter(|s| **s).count();
    assert!((3..=4).contains(&n), "{see:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_messages_in_one_write_and_split_frames() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Split", 1, 0).await;
    // Two messages in one write, the second split across two writes.
    let m1 = b"(he1 1.0)";
    let m2 = b"(he2 0.5)(syn)";
    let second = frame(m2);
    let mut bytes = frame(m1).to_vec();
    bytes.extend_from_slice(&second[..4 + 5]);
    a.send_raw(&bytes).await;
    // The pause between the two writes is the thing tested (a frame split
    // across reads).
    tokio::time::sleep(Duration::from_millis(50)).await;
    a.send_raw(&second[4 + 5..]).await;
    a.recv().await;
    let f = a.cycle("").await;
    let f = if joint(&f, "hj2") < 0.1 {
        a.cycle("").await
    } else {
        f
    };
    assert!(joint(&f, "hj1") > 0.5 && joint(&f, "hj2") > 0.2, "{f}");
    server.stop().await;
}

/// A type 4 robot's frames have the toe joints and toe force sensors in the
/// reference's order (llj7/rlj7 after llj6/rlj6, lf1/rf1 before them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_four_frames_have_the_reference_order() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/reference/transcripts"
    );
    let reference =
        std::fs::read_to_string(format!("{dir}/sync_type4_agent_first10.txt")).expect("transcript");
    // The order of the joint perceptors, and where each toe sensor sits
    // relative to them, from a reference frame that has every FRP.
    let with_toes = reference
        .lines()
        .find(|l| l.contains("(FRP (n lf1)") && l.contains("(FRP (n rf1)"))
        .expect("a reference frame with toe contacts");
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Toes", 2, 4).await;
    a.send("(beam -2 1 0)(syn)").await;
    a.recv().await;
    let mut ours = String::new();
    for _ in 0..100 {
        ours = a.cycle("").await;
        if ours.contains("(FRP (n lf1)") && ours.contains("(FRP (n rf1)") {
            break;
        }
    }
    let core = |f: &str| -> Vec<String> {
        shape(f)
            .into_iter()
            .filter(|t| t != "See" && t != "hear")
            .collect()
    };
    let ours_core = core(&ours);
    let ref_core = core(with_toes);
    // Without the optional FRPs the sequences are equal; with them, every
    // FRP present in both sits at the same place.
    let no_frp = |v: &[String]| -> Vec<String> {
        v.iter()
            .filter(|t| !t.starts_with("FRP"))
            .cloned()
            .collect()
    };
    assert_eq!(
        no_frp(&ours_core),
        no_frp(&ref_core),
        "joint order of type 4"
    );
    assert!(
        no_frp(&ours_core).iter().any(|t| t == "HJ:llj7")
            && no_frp(&ours_core).iter().any(|t| t == "HJ:rlj7")
    );
    for sensor in ["FRP:rf", "FRP:rf1", "FRP:lf", "FRP:lf1"] {
        if let (Some(i), Some(j)) = (
            ours_core.iter().position(|t| t == sensor),
            ref_core.iter().position(|t| t == sensor),
        ) {
            assert_eq!(
                ours_core.get(i + 1),
                ref_core.get(j + 1),
                "{sensor} is followed by the same joint"
            );
        }
    }
    server.stop().await;
}

/// A robot standing on the field in the running server feels its
/// own weight on its feet and gravity in its accelerometer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standing_agent_feels_its_weight() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.agent().await;
    a.join("Weight", 1, 0).await;
    a.send("(beam -4 2 0)(syn)").await;
    a.recv().await;
    for _ in 0..100 {
        a.cycle("").await;
    }
    let weight = 4.6071 * 9.81;
    let vec3 = |f: &str, key: &str| -> [f32; 3] {
        let i = f.find(key).unwrap_or_else(|| panic!("{key} in {f}")) + key.len();
        let v: Vec<f32> = f[i..i + f[i..].find(')').expect(")")]
            .split(' ')
            .map(|x| x.parse().expect("number"))
            .collect();
        [v[0], v[1], v[2]]
    };
    for _ in 0..10 {
        let f = a.cycle("").await;
        let fz = |name: &str| {
            let key = format!("(FRP (n {name}) (c ");
            let i = f
                .find(&key)
                .unwrap_or_else(|| panic!("{name} touching: {f}"));
            let rest = &f[i..];
            let j = rest.find("(f ").expect("f") + 3;
            let v: Vec<f32> = rest[j..j + rest[j..].find(')').expect(")")]
                .split(' ')
                .map(|x| x.parse().expect("number"))
                .collect();
            v[2]
        };
        let total = fz("lf") + fz("rf");
        assert!(
            (total - weight).abs() < 0.05 * weight,
            "FRP sum {total} N vs weight {weight} N"
        );
        let acc = vec3(&f, "(ACC (n torso) (a ");
        assert!(
            (acc[2] - 9.81).abs() < 0.3 && acc[0].abs() < 0.3 && acc[1].abs() < 0.3,
            "ACC {acc:?}"
        );
    }
    server.stop().await;
}

/// A match log that cannot be created stops the server before it starts,
/// with the log's own error (path and I/O cause) as the typed source.
#[tokio::test]
async fn a_match_log_that_cannot_be_created_is_an_error_with_its_cause() {
    let dir = util::Scratch::new("nolog-lib");
    let mut cfg = test_config();
    let path = dir.0.join("no such folder").join("match.log");
    cfg.monitor.log = Some(path.clone());
    let agents = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let monitors = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let err = rcss3d::app::run(
        std::sync::Arc::new(cfg),
        agents,
        monitors,
        std::future::pending(),
    )
    .await
    .expect_err("no log, no match");
    let source = std::error::Error::source(&err).expect("the cause is kept");
    let log = source
        .downcast_ref::<rcss3d::monitor::log::LogError>()
        .unwrap_or_else(|| panic!("a log error, not {source}"));
    assert!(log.to_string().contains(&*path.to_string_lossy()), "{log}");
    let io = std::error::Error::source(log).expect("the I/O cause is kept");
    assert_eq!(
        io.downcast_ref::<std::io::Error>().map(|e| e.kind()),
        Some(std::io::ErrorKind::NotFound)
    );
}

/// A refused `scene` naming `tag`, and the log line it gives.
async fn refused_scene(server: &TestServer, tag: &str) -> bool {
    let mut a = server.agent().await;
    a.send(&format!("(scene rsg/agent/{tag}.rsg)")).await;
    util::wait_for_logs(|text| {
        text.lines()
            .any(|l| l.contains("scene refused") && l.contains(tag))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tests_log_capture_holds_its_own_servers_lines_and_no_other_tests() {
    util::capture_logs();
    let server = TestServer::start(test_config()).await;
    // Another test on a thread of its own, as libtest runs it, with its
    // own runtime and server, at the same time.
    let other = std::thread::spawn(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(async {
                util::capture_logs();
                let server = TestServer::start(test_config()).await;
                assert!(
                    refused_scene(&server, "other-test").await,
                    "{}",
                    util::logs()
                );
                server.stop().await;
                util::logs()
            })
    });
    assert!(refused_scene(&server, "own-test").await, "{}", util::logs());
    let other = other.join().expect("the other test");
    server.stop().await;
    let own = util::logs();
    assert!(own.contains("simulation running"), "{own}");
    assert!(!own.contains("other-test"), "{own}");
    assert!(!other.contains("own-test"), "{other}");
}
