//! The page in headless Chromium: the live match and a replayed log after
//! a seek, each checked twice: the page's own state against the truth,
//! and the screenshot's pixels where the page's camera puts the ball, every
//! robot, the grass and a field line.

use std::time::Duration;

use nalgebra::Vector3;
use rcss3d::rules::Side;
use rcss3d::web::WebConfig;
use serde_json::Value;

use crate::chrome::{chromium_or_skip, Chrome};
use crate::harness::{
    join_and_beam, log_scenes, one_at_a_time, settle, LogPlayer, Truth, WebServer,
};
use crate::pixels::{Class, Image};
use crate::util::{test_config, AutoSync, Scratch};

const WIDTH: u32 = 1600;
const HEIGHT: u32 = 1000;

fn vec3(v: &Value) -> Vector3<f32> {
    let a = v
        .as_array()
        .unwrap_or_else(|| panic!("expected [x, y, z], got {v}"));
    let f = |i: usize| a[i].as_f64().expect("number") as f32;
    Vector3::new(f(0), f(1), f(2))
}

/// Screen position (screenshot pixels) of a field point under the page's
/// camera.
fn project(state: &Value, p: Vector3<f32>) -> (f64, f64) {
    let cam = &state["camera"];
    let m: Vec<f64> = cam["viewProj"]
        .as_array()
        .expect("viewProj")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect();
    let (x, y, z) = (f64::from(p.x), f64::from(p.y), f64::from(p.z));
    let cx = m[0] * x + m[4] * y + m[8] * z + m[12];
    let cy = m[1] * x + m[5] * y + m[9] * z + m[13];
    let w = m[3] * x + m[7] * y + m[11] * z + m[15];
    assert!(w > 0.0, "point {p:?} is behind the camera");
    let r = &cam["rect"];
    let num = |k: &str| r[k].as_f64().expect("rect");
    (
        num("left") + (cx / w * 0.5 + 0.5) * num("width"),
        num("top") + (1.0 - (cy / w * 0.5 + 0.5)) * num("height"),
    )
}

fn side_name(s: Side) -> &'static str {
    match s {
        Side::Left => "left",
        Side::Right => "right",
    }
}

fn class_of(s: Side) -> Class {
    match s {
        Side::Left => Class::Left,
        Side::Right => Class::Right,
    }
}

/// The page state and the screenshot both show `truth`.
fn check_page(what: &str, state: &Value, png: &[u8], truth: &Truth) {
    let dump = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("web-{what}.png"));
    std::fs::write(&dump, png).expect("keep the screenshot");
    let img = Image::from_png(png);
    assert_eq!((img.width, img.height), (WIDTH, HEIGHT));

    // The page's state: ball and every robot where the truth has them.
    let ball = vec3(&state["ball"]);
    assert!(
        (ball - truth.ball).norm() < 2e-3,
        "{what}: page ball {ball:?}, truth {:?}",
        truth.ball
    );
    let robots = state["robots"].as_array().expect("robots");
    assert_eq!(robots.len(), truth.robots.len(), "{what}: robot count");
    for (side, unum, torso) in &truth.robots {
        let r = robots
            .iter()
            .find(|r| r["side"] == side_name(*side) && r["unum"] == *unum)
            .unwrap_or_else(|| panic!("{what}: page lacks robot {side:?} {unum}"));
        let p = vec3(&r["torso"]);
        assert!(
            (p - torso).norm() < 2e-3,
            "{what}: robot {side:?} {unum} torso {p:?}, truth {torso:?}"
        );
        let parts = r["parts"].as_array().expect("parts");
        let want = if r["type"] == 4 { 25 } else { 23 };
        assert_eq!(parts.len(), want, "{what}: parts of {side:?} {unum}");
        assert!(
            parts.iter().all(|p| p["name"].is_string()),
            "{what}: unnamed part"
        );
    }
    assert_eq!(state["playMode"].as_str(), truth.play_mode.as_deref());
    assert_eq!(
        state["score"],
        serde_json::json!([truth.score.0, truth.score.1]),
        "{what}: score"
    );

    // The picture: ball and robots drawn at their projections, and not
    // where there is nothing.
    let (bx, by) = project(state, truth.ball);
    let n = img.count_near(bx, by, 2, Class::Ball);
    assert!(
        n >= 3,
        "{what}: no ball at ({bx:.0}, {by:.0}):\n{}",
        img.describe_near(bx, by, 2)
    );
    let empty = |p: Vector3<f32>| {
        (p - truth.ball).xy().norm() > 1.0
            && truth
                .robots
                .iter()
                .all(|(_, _, t)| (p - t).xy().norm() > 1.2)
    };
    let away = truth.ball + Vector3::new(0.0, 1.5, 0.0);
    if empty(away) {
        let (x, y) = project(state, away);
        assert_eq!(
            img.count_near(x, y, 2, Class::Ball),
            0,
            "{what}: ball colour on empty grass"
        );
    }
    for (side, unum, torso) in &truth.robots {
        let (x, y) = project(state, *torso);
        let n = img.count_near(x, y, 4, class_of(*side));
        assert!(
            n >= 5,
            "{what}: robot {side:?} {unum} not drawn at ({x:.0}, {y:.0}):\n{}",
            img.describe_near(x, y, 4)
        );
        let beside = torso + Vector3::new(0.0, 2.0, 0.0);
        if empty(beside) {
            let (x, y) = project(state, beside);
            assert_eq!(
                img.count_near(x, y, 4, class_of(*side)),
                0,
                "{what}: team colour 2 m beside robot {side:?} {unum}"
            );
            assert!(
                img.count_near(x, y, 4, Class::Grass) > 40,
                "{what}: no grass beside a robot"
            );
        }
    }
    // The field: grass in a corner, the halfway line near a touch line.
    let (x, y) = project(state, Vector3::new(-10.0, 7.0, 0.0));
    assert!(
        img.count_near(x, y, 3, Class::Grass) >= 45,
        "{what}: no grass"
    );
    let (x, y) = project(state, Vector3::new(0.0, -8.5, 0.0));
    assert!(
        img.count_near(x, y, 1, Class::Line) >= 2,
        "{what}: no halfway line at ({x:.0}, {y:.0}):\n{}",
        img.describe_near(x, y, 1)
    );
}

/// Waits until the page has drawn a world in which `ready` holds.
async fn wait_drawn(chrome: &mut Chrome, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    chrome
        .wait_state(what, |s| {
            s["drawnSeq"] == s["seq"] && s["seq"].as_i64().unwrap_or(-1) >= 0 && ready(s)
        })
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_draws_the_live_match_and_a_replayed_log_after_a_seek() {
    let _turn = one_at_a_time().await;
    // No browser: say so and pass, except under CI (then fail, clearly).
    let Some(browser) =
        chromium_or_skip("page_draws_the_live_match_and_a_replayed_log_after_a_seek")
    else {
        return;
    };
    let scratch = Scratch::new("browser");
    let log = scratch.0.join("match.log.gz");
    let mut cfg = test_config();
    cfg.monitor.log = Some(log.clone());
    cfg.monitor.log_step = 2;
    cfg.monitor.monitor_step = 1;
    let server = WebServer::start(cfg, WebConfig::default()).await;

    // Four robots of types 0, 4, 4, 1; each keeps answering once joined.
    let mut group: Vec<AutoSync> = Vec::new();
    for (team, unum, t, x, y) in [
        ("Alpha", 1, 0, -4.0, 2.0),
        ("Alpha", 2, 4, -2.0, -3.0),
        ("Beta", 1, 4, 3.0, 1.5),
        ("Beta", 2, 1, 6.0, -4.0),
    ] {
        group.push(join_and_beam(&server, team, unum, t, x, y).await.autosync());
    }
    // The ball visits a few places, so the log's frames differ.
    let mut mon = server.monitor().await;
    // In BeforeKickOff the referee holds the ball at the centre.
    mon.send("(playMode PlayOn)")
        .await
        .expect("monitor command");
    let stops: [[f32; 2]; 3] = [[-6.0, 4.0], [2.0, -6.0], [5.0, 5.0]];
    for [x, y] in stops {
        mon.send(&format!("(ball (pos {x} {y} 0.042) (vel 0 0 0))"))
            .await
            .expect("monitor command");
        let target = Vector3::new(x, y, 0.042);
        let mut there = false;
        for _ in 0..500 {
            mon.next_message().await.expect("monitor message");
            if mon
                .scene()
                .ball_position()
                .is_some_and(|b| (b - target).xy().norm() < 0.05)
            {
                there = true;
                break;
            }
        }
        assert!(there, "the ball never reached ({x}, {y})");
        // Some frames at each place.
        for _ in 0..30 {
            mon.next_message().await.expect("monitor message");
        }
    }
    // The agents stop answering: the simulation waits for them, still.
    let idle = AutoSync::stop_all(group).await;
    let truth = Truth::of(&settle(&server, &mut mon, Duration::from_millis(1500)).await);
    assert_eq!(truth.robots.len(), 4);

    let mut chrome = Chrome::start(&browser, WIDTH, HEIGHT).await;
    chrome.navigate(&server.url("#camera=top")).await;
    let want_ball = truth.ball;
    let state = wait_drawn(&mut chrome, "the live match", |s| {
        s["mode"] == "live"
            && s["robots"].as_array().map(Vec::len) == Some(4)
            && s["ball"].is_array()
            && (vec3(&s["ball"]) - want_ball).norm() < 2e-3
    })
    .await;
    assert_eq!(state["teams"], serde_json::json!(["Alpha", "Beta"]));
    assert_eq!(state["camera"]["mode"], "top");
    let png = chrome.screenshot().await;
    check_page("live", &state, &png, &truth);

    // A trainer button: the server takes the command (the port is open).
    chrome
        .eval("document.getElementById('kickoff-left').click(); true")
        .await;
    chrome
        .wait_state("the kick-off acknowledged", |s| s["lastAck"]["ok"] == true)
        .await;

    drop(idle);
    server.stop().await;

    // The same page for the log, after a seek to a frame in the middle.
    let scenes = log_scenes(&log);
    let last = Truth::of(scenes.last().expect("log lines"));
    let k = scenes
        .iter()
        .position(|s| {
            s.ball_position()
                .is_some_and(|b| (b.xy() - nalgebra::Vector2::new(2.0, -6.0)).norm() < 0.05)
        })
        .expect("a frame with the ball at its second place")
        + 3;
    let truth_k = Truth::of(&scenes[k]);
    assert!(
        (truth_k.ball - last.ball).norm() > 1.0,
        "the seek must change the picture"
    );

    let player = LogPlayer::start(&log).await;
    let addr = player.addr;
    chrome.navigate(&format!("http://{addr}/#camera=top")).await;
    let frames = scenes.len() as u64;
    chrome
        .wait_state("the log's hello", |s| {
            s["mode"] == "replay" && s["frames"] == frames
        })
        .await;
    chrome.eval("window.rcss3d.pause()").await;
    chrome.eval(&format!("window.rcss3d.seek({k})")).await;
    let k64 = k as i64;
    let state = wait_drawn(&mut chrome, "the frame sought", |s| {
        s["seq"] == k64 && s["replay"]["playing"] == false
    })
    .await;
    let png = chrome.screenshot().await;
    check_page("replay", &state, &png, &truth_k);

    // Stepping back one frame shows the frame before.
    chrome.eval("window.rcss3d.step(-1)").await;
    wait_drawn(&mut chrome, "one frame back", |s| s["seq"] == k64 - 1).await;

    player.stop().await;
}
