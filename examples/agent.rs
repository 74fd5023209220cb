//! A minimal agent: one Nao that joins a team, beams to its place before
//! kick-off and turns its head from side to side by closing a loop on its
//! joint sensor, the way every team's agent drives its joints.
//!
//! Start a server (`rcss3d`, or `rcss3d --sync`), then:
//!
//! ```text
//! cargo run --example agent -- [HOST:PORT] [TEAM] [UNUM] [TYPE]
//! cargo run --example agent -- 127.0.0.1:3100 Demo 7 0
//! ```
//!
//! What it shows:
//! * the handshake: `(scene …)`, the first frame, then `(init …)`;
//! * reading a frame: `time`, `GS` (side and play mode), `HJ` joint angles;
//! * acting: `(he1 speed)` hinge speeds in rad/s, `(beam x y rot)` before
//!   kick-off, and `(syn)` after every answer so the same agent also runs
//!   in sync mode (a server in real-time mode ignores it).
//!
//! The agent stops when the server closes the connection.

use std::collections::BTreeMap;
use std::error::Error;

use rcss3d::net::client::AgentClient;
use rcss3d::sexp::{self, Sexp};

/// What the agent keeps from one frame.
#[derive(Debug, Default)]
struct Percept {
    /// `(time (now T))`: simulation time in seconds.
    time: Option<f32>,
    /// `(GS … (team left|right) …)`: our side, once the server says it.
    side: Option<String>,
    /// `(GS … (pm Mode))`: the play mode.
    play_mode: Option<String>,
    /// `(HJ (n hj1) (ax deg))`: joint angles in degrees, by perceptor name.
    joints: BTreeMap<String, f32>,
}

/// `(name value…)` pairs inside a perceptor, e.g. `(n hj1)` in `HJ`.
fn field<'a>(items: &'a [Sexp], name: &str) -> Option<&'a str> {
    items.iter().find_map(|item| match item.as_predicate() {
        Some((n, [value, ..])) if n == name => value.as_atom(),
        _ => None,
    })
}

fn read_percept(frame: &[u8], out: &mut Percept) {
    for item in sexp::parse(frame).items {
        let Some((name, rest)) = item.as_predicate() else {
            continue;
        };
        match name {
            "time" => out.time = field(rest, "now").and_then(|t| t.parse().ok()),
            "GS" => {
                if let Some(team) = field(rest, "team") {
                    out.side = Some(team.to_owned());
                }
                out.play_mode = field(rest, "pm").map(str::to_owned);
            }
            "HJ" => {
                if let (Some(n), Some(ax)) = (field(rest, "n"), field(rest, "ax")) {
                    if let Ok(deg) = ax.parse() {
                        out.joints.insert(n.to_owned(), deg);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The head's target angle (degrees) at time `t`: a slow look left and
/// right.
fn head_target(t: f32) -> f32 {
    60.0 * (0.5 * t).sin()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3100".into());
    let team = args.next().unwrap_or_else(|| "Demo".into());
    let unum: u8 = args.next().map_or(Ok(7), |s| s.parse())?;
    let robot_type: u8 = args.next().map_or(Ok(0), |s| s.parse())?;

    let mut agent = AgentClient::connect(&addr).await?;
    agent
        .send(&format!(
            "(scene rsg/agent/nao/nao_hetero.rsg {robot_type})"
        ))
        .await?;
    // The robot exists once the first frame arrives; only then is `init`
    // taken.
    if agent.recv().await?.is_none() {
        return Err("the server closed the connection before the first frame".into());
    }
    agent
        .send(&format!("(init (unum {unum}) (teamname {team}))"))
        .await?;

    let mut percept = Percept::default();
    let mut beamed = false;
    while let Some(frame) = agent.recv().await? {
        read_percept(&frame, &mut percept);
        let mut answer = String::new();
        // Before kick-off a beam places the robot; the referee ignores it
        // later.
        if !beamed && percept.play_mode.as_deref() == Some("BeforeKickOff") {
            answer.push_str("(beam -3 0 0)");
            beamed = true;
        }
        // A proportional controller on the head yaw: the effector takes a
        // speed, the perceptor reports an angle.
        if let (Some(t), Some(angle)) = (percept.time, percept.joints.get("hj1")) {
            let speed = 0.1 * (head_target(t) - angle);
            answer.push_str(&format!("(he1 {speed:.3})"));
        }
        answer.push_str("(syn)");
        agent.send(&answer).await?;
        if let (Some(t), Some(side)) = (percept.time, &percept.side) {
            if ((t * 50.0).round() as u64).is_multiple_of(100) {
                let head = percept.joints.get("hj1").copied().unwrap_or_default();
                println!("t = {t:7.2} s  side {side}  head yaw {head:6.1}°");
            }
        }
    }
    println!("the server closed the connection");
    Ok(())
}
