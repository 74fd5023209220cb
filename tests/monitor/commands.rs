//! Every command form of docs/protocol.md#monitor-commands, as RoboViz and
//! FCPCodebase write them, decodes to the right `MonitorCommand`.

use nalgebra::Vector3;
use rcss3d::monitor::{
    parse_commands, IgnoredCommand, MonitorCommand as C, MonitorCommandError, RobotRef, Selection,
};
use rcss3d::rules::{PlayMode, Side};

fn one(text: &str) -> C {
    let mut v = parse_commands(text.as_bytes());
    assert_eq!(v.len(), 1, "{text}: {v:?}");
    v.remove(0).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> MonitorCommandError {
    let mut v = parse_commands(text.as_bytes());
    assert_eq!(v.len(), 1, "{text}: {v:?}");
    v.remove(0).expect_err(text)
}

const L3: RobotRef = RobotRef {
    team: Side::Left,
    unum: 3,
};

#[test]
fn roboviz_strings() {
    assert_eq!(one("(kickOff Left)"), C::KickOff(Some(Side::Left)));
    assert_eq!(one("(kickOff Right)"), C::KickOff(Some(Side::Right)));
    assert_eq!(one("(dropBall)"), C::DropBall);
    assert_eq!(
        one("(playMode free_kick_left)"),
        C::PlayMode(PlayMode::FreeKickLeft)
    );
    assert_eq!(
        one("(playMode direct_free_kick_right)"),
        C::PlayMode(PlayMode::DirectFreeKickRight)
    );
    for m in PlayMode::ALL {
        assert_eq!(one(&format!("(playMode {})", m.name())), C::PlayMode(m));
    }
    assert_eq!(
        one("(ball (pos 1.00 -2.50 0.04) (vel 0.00 0.00 0.00))"),
        C::Ball {
            pos: Some(Vector3::new(1.0, -2.5, 0.04)),
            vel: Some(Vector3::zeros())
        }
    );
    assert_eq!(
        one("(agent (team Left)(unum 3)(pos -4.20 1.00 0.48))"),
        C::AgentPos {
            robot: L3,
            pos: Vector3::new(-4.2, 1.0, 0.48)
        }
    );
    assert_eq!(one("(time 0)"), C::Time(0.0));
    assert_eq!(one("(reqfullstate)"), C::ReqFullState);
    assert_eq!(one("(killsim)"), C::KillSim);
}

#[test]
fn fcpcodebase_forms() {
    // Python's str() of floats and ints, unum before team.
    assert_eq!(
        one("(agent (unum 3) (team Left) (move -14 0.5 0.5 -90))"),
        C::AgentMove {
            robot: L3,
            pos: Vector3::new(-14.0, 0.5, 0.5),
            yaw_deg: -90.0
        }
    );
    assert_eq!(
        one("(agent (unum 3) (team Left) (pos 1e-05 -14 0.35))"),
        C::AgentPos {
            robot: L3,
            pos: Vector3::new(1e-5, -14.0, 0.35)
        }
    );
    assert_eq!(
        one("(ball (vel 0 0 0) (pos -1.5 2 0.042))"),
        C::Ball {
            pos: Some(Vector3::new(-1.5, 2.0, 0.042)),
            vel: Some(Vector3::zeros())
        }
    );
    assert_eq!(
        one("(ball (pos 0 0 0.042))"),
        C::Ball {
            pos: Some(Vector3::new(0.0, 0.0, 0.042)),
            vel: None
        }
    );
    assert_eq!(
        one("(ball (vel 1.5E+00 0 0))"),
        C::Ball {
            pos: None,
            vel: Some(Vector3::new(1.5, 0.0, 0.0))
        }
    );
    assert_eq!(one("(playMode PlayOn)"), C::PlayMode(PlayMode::PlayOn));
    assert_eq!(one("(time 12.5)"), C::Time(12.5));
    // Exactly as FCPCodebase's Server_Comm.py formats them (f-strings of
    // Python/numpy floats; the beam's yaw is rot - 90 on the left side).
    assert_eq!(
        one("(agent (unum 3) (team Left) (move -14.0 0.5 0.5 -90.0))"),
        C::AgentMove {
            robot: L3,
            pos: Vector3::new(-14.0, 0.5, 0.5),
            yaw_deg: -90.0
        }
    );
    assert_eq!(
        one("(ball (pos -0.0 1e-05 0.042) (vel 0 0 0))"),
        C::Ball {
            pos: Some(Vector3::new(-0.0, 1e-5, 0.042)),
            vel: Some(Vector3::zeros())
        }
    );
    assert_eq!(
        one("(kill (unum 7) (team Right))"),
        C::Kill(Some(RobotRef {
            team: Side::Right,
            unum: 7
        }))
    );
    assert_eq!(one("(time 68.78)"), C::Time(68.78));
    assert_eq!(
        one("(playMode BeforeKickOff)"),
        C::PlayMode(PlayMode::BeforeKickOff)
    );
    // Several commands in one frame, with or without separators.
    let v = parse_commands(b"(playMode PlayOn)(ball (pos 0 0 0.042)) (time 3)");
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(Result::is_ok));
}

#[test]
fn every_other_form() {
    assert_eq!(one("(kickOff None)"), C::KickOff(None));
    assert_eq!(
        one("(agent (team Right) (unum 11) (battery 75.5))"),
        C::AgentBattery {
            robot: RobotRef {
                team: Side::Right,
                unum: 11
            },
            battery: 75.5
        }
    );
    assert_eq!(
        one("(agent (team Left) (unum 3) (temperature 40))"),
        C::Ignored(IgnoredCommand::Temperature)
    );
    assert_eq!(one("(agent)"), C::AgentPush);
    assert_eq!(one("(agent (team Left))"), C::AgentPush);
    assert_eq!(one("(agent (unum 2) (pos 1 2 3))"), C::AgentPush);
    assert_eq!(one("(select)"), C::Select(Selection::Next));
    assert_eq!(one("(select (unum -1))"), C::Select(Selection::Clear));
    assert_eq!(
        one("(select (unum 3) (team Left))"),
        C::Select(Selection::Robot(L3))
    );
    assert_eq!(
        one("(select (team Left) (unum 3.0))"),
        C::Select(Selection::Robot(L3))
    );
    assert_eq!(one("(kill)"), C::Kill(None));
    assert_eq!(one("(kill (unum 3) (team Left))"), C::Kill(Some(L3)));
    assert_eq!(one("(repos)"), C::Repos(None));
    assert_eq!(one("(repos (team Left) (unum 3))"), C::Repos(Some(L3)));
    assert_eq!(one("(score (left 2) (right 1))"), C::Score(2, 1));
    assert_eq!(one("(score (right 0) (left 5))"), C::Score(5, 0));
    assert_eq!(one("(getAck)"), C::Ignored(IgnoredCommand::GetAck));
    assert_eq!(one("(init)"), C::Ignored(IgnoredCommand::Init));
    assert_eq!(one("(auth s3cret)"), C::Auth("s3cret".into()));
    // An agent command with several parts gives each of them.
    let v = parse_commands(b"(agent (team Left) (unum 3) (pos 1 2 3) (battery 9))");
    assert_eq!(v.len(), 2);
}

#[test]
fn bad_commands_are_errors_not_panics() {
    assert!(matches!(
        err("(kickOff left)"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(playMode playon)"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(time -1)"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(time nan)"),
        MonitorCommandError::BadValue { .. }
    ));
    for absurd in ["(time 1e30)", "(time 10000.5)", "(time inf)"] {
        assert!(
            matches!(err(absurd), MonitorCommandError::BadValue { .. }),
            "{absurd} must be refused"
        );
    }
    assert_eq!(one("(time 10000)"), C::Time(10_000.0));
    assert!(matches!(
        err("(ball (pos 1 2))"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(ball (pos inf 0 0))"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(err("(ball)"), MonitorCommandError::Missing { .. }));
    assert!(matches!(
        err("(score (left 1))"),
        MonitorCommandError::Missing { .. }
    ));
    assert!(matches!(
        err("(score (left -1) (right 0))"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(agent (team None) (unum 1) (pos 0 0 0))"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(agent (team Left) (unum 300) (pos 0 0 0))"),
        MonitorCommandError::BadValue { .. }
    ));
    assert!(matches!(
        err("(frobnicate)"),
        MonitorCommandError::Unknown(_)
    ));
    assert!(matches!(err("hello"), MonitorCommandError::NotACommand(_)));
    assert!(matches!(err("(kickOff"), MonitorCommandError::Syntax(_)));
    assert!(matches!(
        err("\u{0}\u{fffd}"),
        MonitorCommandError::NotACommand(_)
    ));
    assert_eq!(
        parse_commands(&[0xff, 0xfe]),
        vec![Err(MonitorCommandError::NotText)]
    );
    // Commands before a syntax error are kept.
    let v = parse_commands(b"(dropBall)(kickOff Left");
    assert_eq!(v.len(), 2);
    assert_eq!(v[0], Ok(C::DropBall));
    assert!(v[1].is_err());
    // Deep nesting and long garbage do not hurt.
    let deep = "(".repeat(60_000);
    assert!(!parse_commands(deep.as_bytes()).is_empty());
    let _ = parse_commands(&vec![b'x'; 70_000]);
}

mod properties {
    use proptest::prelude::*;
    use rcss3d::monitor::client::{validate_message, TrackedScene};
    use rcss3d::monitor::parse_commands;

    proptest! {
        /// Untrusted bytes never panic the command decoder.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_commands(&bytes);
        }

        /// Nor do command-shaped strings built from the real vocabulary.
        #[test]
        fn command_like_text_never_panics(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("("), Just(")"), Just("agent"), Just("team"), Just("unum"),
                    Just("pos"), Just("move"), Just("ball"), Just("vel"), Just("Left"),
                    Just("Right"), Just("select"), Just("kill"), Just("score"), Just("left"),
                    Just("time"), Just("-1"), Just("1e-05"), Just("nan"), Just("300"),
                    Just("3.5"), Just(" "),
                ],
                0..40,
            )
        ) {
            let _ = parse_commands(words.concat().as_bytes());
        }

        /// A client fed a corrupted server message reports an error; it
        /// never panics.
        #[test]
        fn corrupted_messages_never_panic_the_client(cut in 0usize..4000, byte in any::<u8>()) {
            let snap = crate::util::snapshot(0, [0.0, 0.0], vec![]);
            let b = rcss3d::monitor::FrameBuilder::new(&Default::default());
            let mut st = rcss3d::monitor::ConsumerState::new();
            let mut msg = String::new();
            b.write(&mut st, &snap, &mut msg);
            let mut bytes = msg.into_bytes();
            let i = cut % bytes.len();
            bytes[i] = byte;
            if let Ok(text) = String::from_utf8(bytes) {
                let _ = validate_message(&text);
                let _ = TrackedScene::default().apply(&text);
            }
        }
    }
}
