//! A trainer script: drives a running server through its monitor port, as
//! training scripts do with rcssserver3d. It rolls the ball towards the
//! right goal from three places, follows the match until the ball stops,
//! and prints where it stopped and whether it was a goal.
//!
//! Start a server (`rcss3d`), then:
//!
//! ```text
//! cargo run --example trainer -- [HOST:PORT]
//! ```
//!
//! What it shows:
//! * commands on the monitor port: `(playMode …)`, `(ball (pos …) (vel …))`
//!   (the full list is in the README, "Monitors, trainers and logs");
//! * following the match: every message is checked and applied to a
//!   tracked copy of the scene ([`rcss3d::monitor::client::MonitorClient`]),
//!   which gives the ball position, the robots, the score and play mode.

use std::error::Error;
use std::time::Duration;

use rcss3d::monitor::client::MonitorClient;

/// Where each shot starts (x, y) and its velocity (vx, vy), m and m/s.
const SHOTS: [([f32; 2], [f32; 2]); 3] = [
    ([11.0, 0.0], [8.0, 0.0]),
    ([8.0, 3.0], [5.0, -1.5]),
    ([3.0, -4.0], [4.0, 2.0]),
];

/// The ball's radius: its centre rests this high above the ground.
const BALL_RADIUS: f32 = 0.042;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3200".into());
    let mut monitor = MonitorClient::connect(&addr).await?;
    // The first message is a full state: the scene is known from then on.
    monitor.next_message().await?.ok_or("no full state")?;

    for ([x, y], [vx, vy]) in SHOTS {
        monitor
            .send(&format!(
                "(playMode PlayOn)(ball (pos {x} {y} {BALL_RADIUS}) (vel {vx} {vy} 0))"
            ))
            .await?;
        let goals_before = score(&monitor);
        // Follow the match until the ball has stopped (moved less than
        // 1 mm between two messages) or 10 s have passed.
        let mut last = None;
        let stopped = tokio::time::timeout(Duration::from_secs(10), async {
            while monitor.next_message().await?.is_some() {
                let Some(ball) = monitor.scene().ball_position() else {
                    continue;
                };
                let moved =
                    last.map_or(f32::INFINITY, |l: nalgebra::Vector3<f32>| (ball - l).norm());
                last = Some(ball);
                // The first messages may still show the old position.
                if moved < 1e-3 && (ball.x - x).abs() + (ball.y - y).abs() > 0.1 {
                    return Ok::<_, Box<dyn Error>>(Some(ball));
                }
            }
            Ok(None)
        })
        .await;
        let goal = score(&monitor) != goals_before;
        match stopped {
            Ok(Ok(Some(ball))) => println!(
                "shot from ({x}, {y}) at ({vx}, {vy}) m/s: ball stopped at ({:.2}, {:.2}){}",
                ball.x,
                ball.y,
                if goal { ", goal" } else { "" }
            ),
            Ok(Ok(None)) => return Err("the server closed the connection".into()),
            Ok(Err(e)) => return Err(e),
            Err(_) => println!("shot from ({x}, {y}): the ball was still moving after 10 s"),
        }
    }
    Ok(())
}

/// Goals scored so far, both teams.
fn score(monitor: &MonitorClient) -> u32 {
    let game = &monitor.scene().game;
    game.score_left + game.score_right
}
