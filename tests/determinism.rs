//! In sync mode, the same seed and the same scripted agents give a
//! byte-identical match log; a different seed gives a different one.

mod util;

use util::{test_config, Scratch, TestServer};

/// Runs a scripted 2 v 2 match for `cycles` cycles and returns the log.
async fn scripted_match(seed: u64, cycles: usize, tag: &str) -> Vec<u8> {
    util::capture_logs();
    let dir = Scratch::new(&format!("det-{tag}"));
    let log = dir.0.join("match.log");
    let mut cfg = test_config();
    cfg.seed = seed;
    cfg.sync_wait_for_agents = 4;
    cfg.monitor.log = Some(log.clone());
    cfg.rules.automatic_kick_off = true;
    cfg.rules.wait_before_kick_off = 1.0;
    let server = TestServer::start(cfg).await;
    // Connect one after the other so connection ids are the same each run.
    let mut agents = server
        .scripted_agents(&[0, 1, 2, 0], &["Det1", "Det2"])
        .await;
    for (i, a) in agents.iter_mut().enumerate() {
        a.send(&format!(
            "(beam {} {} 0)(syn)",
            -2.0 - i as f32,
            i as f32 - 1.5
        ))
        .await;
    }
    let t0 = std::time::Instant::now();
    for c in 0..cycles {
        if c % 250 == 0 && std::env::var("RCSS_TEST_PROGRESS").is_ok() {
            eprintln!("[{tag}] cycle {c} after {:?}", t0.elapsed());
        }
        for a in agents.iter_mut() {
            a.recv().await;
        }
        for (i, a) in agents.iter_mut().enumerate() {
            let v = ((c as f32) * 0.05 + i as f32).sin() * 2.0;
            a.send(&format!(
                "(he1 {v:.4})(lae1 {:.4})(rle3 {:.4})(syn)",
                -v,
                v * 0.3
            ))
            .await;
        }
    }
    server.stop().await;
    std::fs::read(&log).expect("log written")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_seed_same_log_different_seed_different_log() {
    // 60 s of simulated time (3000 cycles) as the acceptance asks.
    let a = scripted_match(11, 3000, "a").await;
    let b = scripted_match(11, 3000, "b").await;
    assert!(a.len() > 10_000, "log too short: {} bytes", a.len());
    // Every line of the 60 s log is valid for RoboViz (log-format.md).
    let text = std::str::from_utf8(&a).expect("ASCII log");
    rcss3d::monitor::client::check_log(text).unwrap_or_else(|e| panic!("log invalid: {e}"));
    assert!(text.lines().count() >= 300, "one line per 0.2 s over 60 s");
    if a != b {
        let line = a
            .split(|c| *c == b'\n')
            .zip(b.split(|c| *c == b'\n'))
            .position(|(x, y)| x != y);
        panic!(
            "logs differ (first differing line {line:?}; {} vs {} bytes)",
            a.len(),
            b.len()
        );
    }
    // A different seed: compare the same stretch of the match, leaving out
    // the first line (it names the seed, which would make any two logs
    // differ trivially).
    let c = scripted_match(12, 500, "c").await;
    let lines_c: Vec<&[u8]> = c.split(|x| *x == b'\n').collect();
    let lines_a: Vec<&[u8]> = a.split(|x| *x == b'\n').collect();
    let k = lines_c.len().min(lines_a.len()) - 1;
    assert!(k > 5, "{k} comparable lines");
    assert_ne!(
        lines_a[1..k],
        lines_c[1..k],
        "a different seed must change the match (beam and vision noise)"
    );
}
