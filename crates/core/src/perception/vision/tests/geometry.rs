//! Where things appear without noise: the stock settings, the landmark
//! table, objects and robot parts against the independent camera model,
//! the order of the elements, the position cheats, empty and non-finite
//! input.

use super::*;

#[test]
fn defaults_are_stock() {
    let c = VisionConfig::default();
    assert_eq!((c.h_view_cone, c.v_view_cone), (120, 120));
    assert!(c.add_noise && c.sense_lines);
    assert!(!c.sense_my_pos && !c.sense_my_orien && !c.sense_ball_pos);
    assert_eq!(c.calibration_error, 0.005);
    assert_eq!(
        (c.sigma_distance, c.sigma_horizontal, c.sigma_vertical),
        (0.0965, 0.1480, 0.1225)
    );
    assert_eq!((c.interval, c.min_distance), (Some(3), 0.1));
    assert!(c.is_vision_cycle(0) && !c.is_vision_cycle(1) && c.is_vision_cycle(3));
    let off = VisionConfig {
        interval: None,
        ..c
    };
    assert!(!off.is_vision_cycle(0));
    // The config section deserialises from RON, partially.
    let parsed: VisionConfig = ron::from_str("(h_view_cone: 360, v_view_cone: 360)").unwrap();
    assert_eq!(parsed.h_view_cone, 360);
    assert!(parsed.add_noise);
    assert!(ron::from_str::<VisionConfig>("(no_such_knob: 1)").is_err());
}

#[test]
fn landmark_positions_match_spec() {
    let f = FieldGeometry::default();
    let want = [
        [-15.0, 1.05, 0.8],
        [-15.0, -1.05, 0.8],
        [15.0, -1.05, 0.8],
        [15.0, 1.05, 0.8],
        [-15.0, 10.0, 0.0],
        [-15.0, -10.0, 0.0],
        [15.0, 10.0, 0.0],
        [15.0, -10.0, 0.0],
    ];
    for (got, want) in f.landmarks().iter().zip(want) {
        assert!((got - v3(want)).norm() < 1e-6);
    }
    for ((a, b), (wa, wb)) in f.lines().iter().zip(spec_lines()) {
        assert!((a - v3(wa)).norm() < 1e-5 && (b - v3(wb)).norm() < 1e-5);
    }
}

/// Observer Left/1 at (-1.5, -1), head 0.54 m up, panned 20 deg left,
/// pitched 15 deg down; noise off. Every landmark, the ball and the parts
/// of three other robots are checked against the independent model:
/// present iff in the cone, and at the right (d, h, v).
#[test]
fn geometry_without_noise() {
    let pos = [-1.5f32, -1.0, 0.54];
    let (heading, pitch) = (20.0, -15.0);
    let cam = RefCam::new(pos, heading, pitch);
    let ball = [0.5, 0.3, 0.042];
    let mut me = SeenRobot {
        team: "Alpha",
        side: Side::Left,
        unum: 1,
        is_self: true,
        parts: standing_parts(-1.5, -1.0, 0.0),
    };
    me.parts[0] = Some(Vector3::from(pos));
    let robots = [
        // Right/1 at (3, 0) facing us: in view.
        SeenRobot {
            team: "Beta",
            side: Side::Right,
            unum: 1,
            is_self: false,
            parts: standing_parts(3.0, 0.0, 180.0),
        },
        me,
        // Left/2 far to the left (h > 60): absent.
        SeenRobot {
            team: "Alpha",
            side: Side::Left,
            unum: 2,
            is_self: false,
            parts: standing_parts(-1.5, 4.0, 0.0),
        },
        // Right/2 with its head high above the camera (v > 60), its feet
        // in view.
        SeenRobot {
            team: "Beta",
            side: Side::Right,
            unum: 2,
            is_self: false,
            parts: [
                Some(Vector3::new(-1.2, -1.0, 3.0)),
                None,
                None,
                Some(Vector3::new(0.5, -1.5, 0.02)),
                Some(Vector3::new(0.5, -1.6, 0.02)),
            ],
        },
    ];
    let input = VisionInput {
        camera: camera(pos, heading, pitch),
        side: Some(Side::Left),
        // Ignored with noise off.
        calibration: Vector3::new(0.005, -0.005, 0.005),
        ball: v3(ball),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let els = see_elements(&text);

    let names = ["G1L", "G2L", "G2R", "G1R", "F1L", "F2L", "F1R", "F2R"];
    let spots = [
        [-15.0, 1.05, 0.8],
        [-15.0, -1.05, 0.8],
        [15.0, -1.05, 0.8],
        [15.0, 1.05, 0.8],
        [-15.0, 10.0, 0.0],
        [-15.0, -10.0, 0.0],
        [15.0, 10.0, 0.0],
        [15.0, -10.0, 0.0],
    ];
    let (mut shown, mut hidden) = (0, 0);
    for (name, p) in names.iter().zip(spots).chain([(&"B", ball)]) {
        let want = ref_polar(cam.local(p));
        match static_pol(&els, name) {
            Some(got) => {
                assert!(ref_visible(want), "{name} should be hidden: {text}");
                assert_pol_close(got, want, name);
                shown += 1;
            }
            None => {
                assert!(!ref_visible(want), "{name} missing: {text}");
                hidden += 1;
            }
        }
    }
    assert!(shown >= 4 && hidden >= 4, "{text}");

    // Robots: every part checked, the own head never reported.
    let (mut by_h, mut by_v) = (false, false);
    for r in &robots {
        for (k, part) in PART_NAMES.iter().enumerate() {
            let got = part_pol(&els, r.team, r.unum, part);
            let Some(p) = r.parts[k] else {
                assert!(got.is_none());
                continue;
            };
            let want = ref_polar(cam.local([p.x as f64, p.y as f64, p.z as f64]));
            if r.is_self && k == 0 {
                assert!(got.is_none(), "own head reported: {text}");
                continue;
            }
            match got {
                Some(got) => {
                    assert!(
                        ref_visible(want),
                        "{} {} {part} should be hidden",
                        r.team,
                        r.unum
                    );
                    assert_pol_close(got, want, part);
                }
                None => {
                    assert!(
                        !ref_visible(want),
                        "{} {} {part} missing: {text}",
                        r.team,
                        r.unum
                    );
                    by_h |= want[1].abs() > 60.0;
                    by_v |= want[2].abs() > 60.0;
                }
            }
        }
    }
    assert!(by_h && by_v, "the scene must hide parts both ways");
    // Left/2 is entirely out of view: no P element at all.
    assert!(!text.contains("(team Alpha) (id 2)"), "{text}");
    // The observer sees its own lower arms or feet.
    assert!(text.contains("(P (team Alpha) (id 1) ("), "{text}");
    // Order: static group, Alpha/1, Beta/1, Beta/2, then lines.
    let order: Vec<String> = els
        .iter()
        .filter(|e| head(e) == "P")
        .map(|e| format!("{} {}", print(&items(e)[1]), print(&items(e)[2])))
        .collect();
    assert_eq!(
        order,
        [
            "(team Alpha) (id 1)",
            "(team Beta) (id 1)",
            "(team Beta) (id 2)"
        ]
    );
    let kinds: Vec<&str> = els.iter().map(head).collect();
    let first_p = kinds.iter().position(|k| *k == "P").unwrap();
    let first_l = kinds.iter().position(|k| *k == "L").unwrap();
    assert!(kinds[..first_p].iter().all(|k| *k != "P" && *k != "L"));
    assert!(kinds[first_l..].iter().all(|k| *k == "L"));
}

#[test]
fn robots_ordered_and_teamless_hidden() {
    let mk = |team: &'static str, side, unum, x: f32| SeenRobot {
        team,
        side,
        unum,
        is_self: false,
        parts: standing_parts(x, 0.0, 180.0),
    };
    let robots = [
        mk("R", Side::Right, 2, 3.0),
        mk("L", Side::Left, 7, 3.5),
        mk("R", Side::Right, 1, 4.0),
        mk("", Side::Left, 3, 4.5),
        mk("L", Side::Left, 2, 5.0),
    ];
    let input = VisionInput {
        camera: camera([0.0, 0.0, 0.54], 0.0, 0.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(-5.0, 0.0, 0.0),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let text = see(&input, &exact(), 1);
    let order: Vec<String> = see_elements(&text)
        .iter()
        .filter(|e| head(e) == "P")
        .map(|e| format!("{} {}", print(&items(e)[1]), print(&items(e)[2])))
        .collect();
    assert_eq!(
        order,
        [
            "(team L) (id 2)",
            "(team L) (id 7)",
            "(team R) (id 1)",
            "(team R) (id 2)"
        ]
    );
}

#[test]
fn position_cheats_in_team_frame() {
    let cfg = VisionConfig {
        add_noise: false,
        sense_my_pos: true,
        sense_my_orien: true,
        sense_ball_pos: true,
        sense_lines: false,
        ..VisionConfig::default()
    };
    // Right team robot at (3, 0.5) looking along -x (its own +x), head
    // turned 30 deg to its left; ball behind it.
    let mut input = VisionInput {
        camera: camera([3.0, 0.5, 0.54], 210.0, 0.0),
        side: Some(Side::Right),
        calibration: Vector3::new(0.005, 0.005, 0.005),
        ball: Vector3::new(5.0, 1.0, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &cfg, 1);
    assert!(
        text.ends_with(" (mypos -3.00 -0.50 0.54) (myorien 30.00) (ballpos -5.00 -1.00 0.04))"),
        "{text}"
    );
    input.side = Some(Side::Left);
    input.camera = camera([3.0, 0.5, 0.54], 210.0, 0.0);
    let text = see(&input, &cfg, 1);
    assert!(
        text.ends_with(" (mypos 3.00 0.50 0.54) (myorien -150.00) (ballpos 5.00 1.00 0.04))"),
        "{text}"
    );
    // Cheats come after objects and players, before lines.
    let cfg = VisionConfig {
        sense_lines: true,
        ..cfg
    };
    let text = see(&input, &cfg, 1);
    let els = see_elements(&text);
    let kinds: Vec<&str> = els.iter().map(head).collect();
    let at = kinds.iter().position(|k| *k == "mypos").unwrap();
    assert_eq!(&kinds[at..at + 3], ["mypos", "myorien", "ballpos"]);
    assert!(kinds[at + 3..].iter().all(|k| *k == "L"));
}

#[test]
fn nothing_visible_gives_empty_see() {
    let input = VisionInput {
        camera: camera([0.0, 0.0, 0.54], 0.0, 90.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(0.5, 0.3, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    assert_eq!(see(&input, &exact(), 1), "(See )");
    assert_eq!(see(&input, &VisionConfig::default(), 1), "(See )");
}

/// Non-finite input never reaches the text.
#[test]
fn never_nan() {
    let robots = [SeenRobot {
        team: "A",
        side: Side::Left,
        unum: 3,
        is_self: false,
        parts: [
            Some(Vector3::new(f32::NAN, 0.0, 0.0)),
            None,
            None,
            None,
            None,
        ],
    }];
    let mut input = VisionInput {
        camera: camera([-1.0, 0.0, 0.54], 0.0, 0.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(f32::INFINITY, 0.0, 0.0),
        robots: &robots,
        field: FieldGeometry::default(),
    };
    let cfg = VisionConfig {
        sense_my_pos: false,
        sense_my_orien: true,
        sense_ball_pos: false,
        ..VisionConfig::default()
    };
    let text = see(&input, &cfg, 1);
    assert!(!text.contains("nan") && !text.contains("inf"), "{text}");
    assert!(!text.contains("(P "), "{text}");
    input.camera = Isometry3::translation(f32::NAN, 0.0, 0.5);
    assert_eq!(see(&input, &exact(), 1), "(See )");
    let text = see(&input, &cfg, 1);
    assert_eq!(text, "(See (myorien 90.00))");
    // Sweep head poses: no clip point may ever come out as NaN.
    let mut out = String::new();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for i in 0..2000 {
        let f = i as f32;
        let input = VisionInput {
            camera: camera(
                [
                    (f * 0.37) % 30.0 - 15.0,
                    (f * 0.73) % 20.0 - 10.0,
                    0.3 + (f * 0.01) % 0.3,
                ],
                f * 7.3,
                (f * 1.7) % 120.0 - 60.0,
            ),
            side: Some(Side::Right),
            calibration: draw_calibration(&cfg, &mut rng),
            ball: Vector3::new(0.0, 0.0, 0.042),
            robots: &[],
            field: FieldGeometry::default(),
        };
        out.clear();
        write_see(&mut out, &input, &cfg, &mut rng);
        assert!(!out.contains("nan") && !out.contains("inf"), "{out}");
    }
}
