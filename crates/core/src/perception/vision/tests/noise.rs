//! Noise and calibration error: their statistics, that they reach the
//! text, and that the same seed gives the same text.

use super::*;

/// 10,000 draws of the noise: mean within 2 % of sigma of zero, standard
/// deviation within 5 % of sigma, for d (in percent of d), h and v.
#[test]
fn noise_statistics() {
    let cfg = VisionConfig::default();
    let eye = Eye {
        cfg: &cfg,
        origin: Vector3::zeros(),
        to_local: Matrix3::identity(),
        shift: Vector3::zeros(),
        half_h: 60.0,
        half_v: 60.0,
        tan_h: 3f32.sqrt(),
        tan_v: 3f32.sqrt(),
    };
    let truth = Polar {
        d: 7.5,
        h: 12.0,
        v: -8.0,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let n = 10_000;
    let mut sum = [0f64; 3];
    let mut sq = [0f64; 3];
    for _ in 0..n {
        let p = eye.noisy(truth, &mut rng);
        let e = [
            ((p.d - truth.d) / truth.d * 100.0) as f64,
            (p.h - truth.h) as f64,
            (p.v - truth.v) as f64,
        ];
        for k in 0..3 {
            sum[k] += e[k];
            sq[k] += e[k] * e[k];
        }
    }
    let sigma = [0.0965f64, 0.1480, 0.1225];
    for k in 0..3 {
        let mean = sum[k] / n as f64;
        let std = (sq[k] / n as f64 - mean * mean).sqrt();
        assert!(mean.abs() <= 0.02 * sigma[k], "component {k}: mean {mean}");
        assert!(
            (std / sigma[k] - 1.0).abs() <= 0.05,
            "component {k}: std {std}"
        );
    }
}

/// Noise reaches the text: with noise on, values differ from the exact
/// ones, but by a few sigma at most.
#[test]
fn noise_is_applied_to_objects_and_lines() {
    let pos = [-1.5f32, -1.0, 0.54];
    let input = VisionInput {
        camera: camera(pos, 0.0, -10.0),
        side: Some(Side::Left),
        calibration: Vector3::zeros(),
        ball: Vector3::new(0.5, 0.3, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let exact_els = see_elements(&see(&input, &exact(), 1));
    let noisy_els = see_elements(&see(&input, &VisionConfig::default(), 1));
    assert_eq!(exact_els.len(), noisy_els.len());
    let mut differ = 0;
    for (e, n) in exact_els.iter().zip(&noisy_els) {
        assert_eq!(head(e), head(n));
        let pols: Vec<(&Sx, &Sx)> = items(e)[1..].iter().zip(&items(n)[1..]).collect();
        for (pe, pn) in pols {
            let (a, b) = (pol(pe), pol(pn));
            differ += usize::from(a != b);
            assert!((a[0] - b[0]).abs() <= 5.0 * 0.000965 * a[0] + 0.011);
            assert!((a[1] - b[1]).abs() <= 5.0 * 0.148 + 0.011);
            assert!((a[2] - b[2]).abs() <= 5.0 * 0.1225 + 0.011);
        }
    }
    assert!(differ >= 5);
}

#[test]
fn calibration_draw() {
    let cfg = VisionConfig::default();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let draws: Vec<Vector3<f32>> = (0..1000)
        .map(|_| draw_calibration(&cfg, &mut rng))
        .collect();
    for e in &draws {
        assert!(e.iter().all(|c| c.abs() <= 0.005));
    }
    let max = draws
        .iter()
        .flat_map(|e| e.iter().copied())
        .fold(0f32, f32::max);
    let min = draws
        .iter()
        .flat_map(|e| e.iter().copied())
        .fold(0f32, f32::min);
    assert!(max > 0.0049 && min < -0.0049);
    let none = VisionConfig {
        calibration_error: 0.0,
        ..cfg
    };
    assert_eq!(draw_calibration(&none, &mut rng), Vector3::zeros());
}

/// The calibration offset shifts angles (objects and lines) and line
/// distances, but not object distances; it is the same in every See.
#[test]
fn calibration_effect() {
    let cfg = VisionConfig {
        sigma_distance: 0.0,
        sigma_horizontal: 0.0,
        sigma_vertical: 0.0,
        h_view_cone: 360,
        v_view_cone: 360,
        ..VisionConfig::default()
    };
    let e = [0.005f64, -0.005, 0.004];
    let pos = [-1.5f32, -1.0, 0.54];
    let cam = RefCam::new(pos, 0.0, 0.0);
    let input = VisionInput {
        camera: camera(pos, 0.0, 0.0),
        side: Some(Side::Left),
        calibration: v3(e),
        ball: Vector3::new(-1.0, -1.0, 0.042),
        robots: &[],
        field: FieldGeometry::default(),
    };
    let text = see(&input, &cfg, 1);
    assert_eq!(text, see(&input, &cfg, 2), "offset must not be redrawn");
    let els = see_elements(&text);
    let shifted = |p: [f64; 3]| cam.local([p[0] + e[0], p[1] + e[1], p[2] + e[2]]);
    // Ball at 0.5 m: the offset moves the angles visibly.
    let ball = [-1.0, -1.0, 0.042];
    let got = static_pol(&els, "B").unwrap();
    let true_d = ref_polar(cam.local(ball))[0];
    let sh = ref_polar(shifted(ball));
    assert_pol_close(got, [true_d, sh[1], sh[2]], "ball");
    assert!((ref_polar(cam.local(ball))[2] - sh[2]).abs() > 0.2);
    // Line end points: distance (and angles) from the shifted vector.
    let lines = lines_of(&els);
    assert_eq!(lines.len(), 21, "full vision shows every line whole");
    for (l, (a, b)) in lines.iter().zip(spec_lines()) {
        assert_pol_close(l[0], ref_polar(shifted(a)), "line start");
        assert_pol_close(l[1], ref_polar(shifted(b)), "line end");
    }
}

#[test]
fn same_seed_same_text() {
    let robots = [SeenRobot {
        team: "Beta",
        side: Side::Right,
        unum: 4,
        is_self: false,
        parts: standing_parts(2.0, 0.5, 180.0),
    }];
    let run = |seed: u64| {
        let cfg = VisionConfig::default();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let calibration = draw_calibration(&cfg, &mut rng);
        let mut out = String::new();
        for i in 0..5 {
            let input = VisionInput {
                camera: camera([-1.5, -1.0, 0.54], 5.0 * i as f32, -10.0),
                side: Some(Side::Left),
                calibration,
                ball: Vector3::new(0.5, 0.3, 0.042),
                robots: &robots,
                field: FieldGeometry::default(),
            };
            write_see(&mut out, &input, &cfg, &mut rng);
        }
        out
    };
    assert_eq!(run(11), run(11));
    assert_ne!(run(11), run(12));
}
