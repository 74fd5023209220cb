//! The text of a See: the same element kinds and shapes as the reference
//! transcripts in `tests/data/reference/transcripts`, and its size
//! budget in a crowded scene.

use super::*;

fn transcript_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/reference/transcripts")
}

/// The `(See ...)` substrings of every agent transcript.
fn transcript_sees() -> Vec<String> {
    let dir = transcript_dir();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt") && !n.contains("monitor") && !n.contains("_sent_"))
        .collect();
    names.sort();
    let mut sees = Vec::new();
    for n in names {
        let text = std::fs::read_to_string(dir.join(&n)).unwrap();
        for line in text.lines() {
            let Some(start) = line.find("(See ") else {
                continue;
            };
            let b = line.as_bytes();
            let mut depth = 0;
            let mut end = start;
            for (i, &c) in b.iter().enumerate().skip(start) {
                depth += i32::from(c == b'(') - i32::from(c == b')');
                if depth == 0 {
                    end = i + 1;
                    break;
                }
            }
            sees.push(line[start..end].to_string());
        }
    }
    sees
}

/// The shape of one See element: numbers become `#`, team names `T`,
/// landmark names `N`; a `P` is split into its header and one shape per
/// part.
fn shapes(el: &Sx) -> Vec<String> {
    fn generic(x: &Sx) -> String {
        match x {
            Sx::A(a) if a.parse::<f64>().is_ok() => "#".into(),
            Sx::A(a) if LANDMARK_NAMES.contains(&a.as_str()) => "N".into(),
            Sx::A(a) => a.clone(),
            Sx::L(items) if head(x) == "team" => {
                assert_eq!(items.len(), 2);
                "(team T)".into()
            }
            Sx::L(items) => format!(
                "({})",
                items.iter().map(generic).collect::<Vec<_>>().join(" ")
            ),
        }
    }
    if head(el) == "P" {
        let it = items(el);
        let mut v = vec![format!("(P {} {} ...)", generic(&it[1]), generic(&it[2]))];
        v.extend(it[3..].iter().map(generic));
        v
    } else {
        vec![generic(el)]
    }
}

/// Our See has the same element kinds and field shapes as the recorded
/// ones (numbers may differ), and both print back canonically
/// (docs/protocol.md#server-message-syntax).
#[test]
fn see_format_matches_transcripts() {
    let sees = transcript_sees();
    assert!(sees.len() >= 20, "transcripts not found or changed");
    let mut reference = std::collections::BTreeSet::new();
    for s in &sees {
        let top = parse_all(s);
        assert_eq!(print(&top[0]), *s, "transcript not canonical?");
        for el in see_elements(s) {
            for sh in shapes(&el) {
                reference.insert(sh);
            }
        }
    }
    // The recorded scene: Left/1 at (-1.5, -1) facing +x, Right/1 at (3, 0)
    // facing -x, Left/2 at (-2, 1), ball on the centre spot.
    let robots = [
        SeenRobot {
            team: "Left",
            side: Side::Left,
            unum: 1,
            is_self: true,
            parts: standing_parts(-1.5, -1.0, 0.0),
        },
        SeenRobot {
            team: "Left",
            side: Side::Left,
            unum: 2,
            is_self: false,
            parts: standing_parts(-2.0, 1.0, 0.0),
        },
        SeenRobot {
            team: "Right",
            side: Side::Right,
            unum: 1,
            is_self: false,
            parts: standing_parts(3.0, 0.0, 180.0),
        },
    ];
    let cfg = VisionConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let calibration = draw_calibration(&cfg, &mut rng);
    let mut ours = std::collections::BTreeSet::new();
    for (heading, pitch) in [(0.0, 0.0), (25.0, -10.0), (-30.0, 5.0)] {
        let input = VisionInput {
            camera: camera([-1.5, -1.0, 0.54], heading, pitch),
            side: Some(Side::Left),
            calibration,
            ball: Vector3::new(0.0, 0.0, 0.042),
            robots: &robots,
            field: FieldGeometry::default(),
        };
        let mut s = String::new();
        write_see(&mut s, &input, &cfg, &mut rng);
        let top = parse_all(&s);
        assert_eq!(top.len(), 1);
        assert_eq!(print(&top[0]), s, "ours not canonical");
        for el in see_elements(&s) {
            // Every number has exactly two decimals.
            fn check(x: &Sx) {
                match x {
                    Sx::A(a) if a.parse::<f64>().is_ok() && a.contains('.') => {
                        let frac = a.rsplit('.').next().unwrap();
                        assert_eq!(frac.len(), 2, "{a}");
                    }
                    Sx::L(items) => items.iter().for_each(check),
                    _ => {}
                }
            }
            check(&el);
            for sh in shapes(&el) {
                ours.insert(sh);
            }
        }
    }
    let extra: Vec<_> = ours.difference(&reference).collect();
    let missing: Vec<_> = reference.difference(&ours).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "extra {extra:?}, missing {missing:?}"
    );
}

/// 22 robots with 20-character team names crowded in front of one camera
/// (and the full-vision variants): the See stays within 6.5 KB, leaving
/// room for the rest of a frame (~1.5 KB) under FCPCodebase's 8192 bytes.
///
/// Upper bound by counting characters: a `pol` is at most 26 bytes
/// (`(pol 99.99 -179.99 -89.99)`), a `P` with 20-character team name and
/// five parts at most 222, the observer's (no head) 188; the 9 static
/// elements at most 295, 21 lines 1218, the cheats 74, `(See)` 5: at most
/// 6442 bytes in any 11-vs-11 scene on the field (distances < 100 m).
#[test]
fn see_fits_the_frame_budget() {
    let team_l = "LLLLLLLLLLLLLLLLLLLL";
    let team_r = "RRRRRRRRRRRRRRRRRRRR";
    let mut crowded = Vec::new();
    let mut around = Vec::new();
    let mut far = Vec::new();
    for i in 0..22u8 {
        let (team, side, unum) = if i < 11 {
            (team_l, Side::Left, i + 1)
        } else {
            (team_r, Side::Right, i - 10)
        };
        let is_self = i == 0;
        let (x, y) = if is_self {
            (-1.5, -1.0)
        } else {
            // In front of the camera, 1 to 6 m away, within +-40 degrees.
            let a = ((i as f32) * 4.0 - 44.0).to_radians();
            let r = 1.0 + (i % 6) as f32;
            (-1.5 + r * a.cos(), -1.0 + r * a.sin())
        };
        crowded.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(x, y, if is_self { 0.0 } else { 180.0 }),
        });
        // Spread around the observer at 10 to 14 m (long numbers, all
        // directions) for the 360-degree variant.
        let a = (i as f32 * 16.3).to_radians();
        let r = if is_self { 0.0 } else { 10.0 + (i % 5) as f32 };
        around.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(-1.5 + r * a.cos(), -1.0 + r * a.sin(), 90.0),
        });
        // 10 to 14 m in front of a camera at (-14, 0), within +-45 degrees.
        let a = ((i as f32) * 4.2 - 45.0).to_radians();
        let r = if is_self { 0.0 } else { 10.0 + (i % 5) as f32 };
        far.push(SeenRobot {
            team,
            side,
            unum,
            is_self,
            parts: standing_parts(
                -14.0 + r * a.cos(),
                r * a.sin(),
                if is_self { 0.0 } else { 180.0 },
            ),
        });
    }
    let cam = camera([-1.5, -1.0, 0.54], 0.0, -20.0);
    let cone = VisionConfig::default();
    let full = VisionConfig {
        h_view_cone: 360,
        v_view_cone: 360,
        ..VisionConfig::default()
    };
    let cheats = VisionConfig {
        sense_my_pos: true,
        sense_my_orien: true,
        sense_ball_pos: true,
        ..VisionConfig::default()
    };
    let far_cam = camera([-14.0, 0.0, 0.54], 0.0, -5.0);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for (name, robots, cfg, cam) in [
        ("crowded 120", &crowded, &cone, cam),
        ("crowded 360", &crowded, &full, cam),
        ("around 360", &around, &full, cam),
        ("far 120 + cheats", &far, &cheats, far_cam),
    ] {
        let input = VisionInput {
            camera: cam,
            side: Some(Side::Left),
            calibration: draw_calibration(cfg, &mut rng),
            ball: Vector3::new(0.0, -1.0, 0.042),
            robots,
            field: FieldGeometry::default(),
        };
        let mut s = String::new();
        write_see(&mut s, &input, cfg, &mut rng);
        let els = see_elements(&s);
        let players = els.iter().filter(|e| head(e) == "P").count();
        let lines = els.iter().filter(|e| head(e) == "L").count();
        eprintln!("{name}: {} bytes, {players} P, {lines} L", s.len());
        assert_eq!(players, 22, "{name}: {s}");
        assert!(lines <= MAX_LINES);
        assert!(s.len() <= 6500, "{name}: {} bytes", s.len());
    }
}
