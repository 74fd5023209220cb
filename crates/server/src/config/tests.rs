//! Tests of the configuration: loading, layering, ranges and the refused
//! spellings.

use super::*;

#[test]
fn the_default_rules_describe_the_default_physics_field() {
    assert_eq!(Config::default().field_size(), FieldSize::default());
}

#[test]
fn monitors_are_told_the_field_of_the_rules() {
    assert_eq!(Config::default().field_params(), FieldParams::default());
    let cfg = Config::from_ron(
        "(rules: (FieldLength: 24.0, GoalWidth: 1.8, RuleHalfTime: 120.0))",
        "f.ron",
    )
    .expect("parses");
    let f = cfg.field_params();
    assert_eq!(
        (f.field_length, f.goal_width, f.rule_half_time),
        (24.0, 1.8, 120.0)
    );
}

#[test]
fn embedded_defaults_equal_code_defaults() {
    let file = Config::embedded().expect("embedded config parses");
    let code = Config::default();
    assert_eq!(format!("{file:?}"), format!("{code:?}"));
}

#[test]
fn unknown_key_is_an_error_with_line() {
    let err = Config::from_ron("(\n  agent_port: 3101,\n  agnet_port: 1,\n)", "x.ron")
        .expect_err("unknown key must fail");
    let text = err.to_string();
    assert!(text.starts_with("x.ron:3:"), "{text}");
    assert!(text.contains("agnet_port"), "{text}");
}

#[test]
fn a_flat_physics_key_is_an_error_naming_it_and_the_sections() {
    let err = Config::from_ron("(\n  physics: (\n    motor_gain: 1e4,\n  ),\n)", "old.ron")
        .expect_err("the flat key of the old physics section must fail");
    let text = err.to_string();
    assert!(text.starts_with("old.ron:3:"), "{text}");
    assert!(text.contains("motor_gain"), "{text}");
    assert!(text.contains("joints"), "the sections are listed: {text}");
    let cfg = Config::from_ron("(physics: (joints: (motor_gain: 1e4)))", "new.ron")
        .expect("the grouped key parses");
    assert_eq!(cfg.physics.joints.motor_gain, 1e4);
}

#[test]
fn partial_file_keeps_defaults_and_ranges_checked() {
    let cfg = Config::from_ron("(sync_mode: true, seed: 7)", "y.ron").expect("parses");
    assert!(cfg.sync_mode);
    assert_eq!(cfg.seed, Some(7));
    assert_eq!(cfg.agent_port, 3100);
    let err = Config::from_ron("(step: 0.0)", "z.ron").expect_err("bad step");
    assert!(err.to_string().starts_with("z.ron: step"), "{err}");
    let err = Config::from_ron("(latency: (sim_fifo_priority: 0))", "l.ron")
        .expect_err("priority out of range");
    assert!(err.to_string().starts_with("l.ron: latency"), "{err}");
    let cfg = Config::from_ron("(latency: (sim_fifo_priority: 20))", "l.ron").expect("parses");
    assert_eq!(cfg.latency.sim_fifo_priority, Some(20));
    assert!(!cfg.latency.keep_cpus_awake);
    let err = Config::from_ron("(agent_port: \"x\")", "w.ron").expect_err("bad type");
    assert!(err.to_string().starts_with("w.ron:1:"), "{err}");
}

/// A scratch directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("rcss3d-config-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        TempDir(dir)
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(&path, text).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn each_source_changes_only_what_it_names_in_order() {
    let tmp = TempDir::new("layers");
    let home = tmp.0.join("home");
    tmp.write(
        "home/.simspark/spark.rb",
        "$agentSyncMode = true\n$agentPort = 4000\n$monitorStep = 0.08\n",
    );
    tmp.write(
        "home/.config/rcss3d/server.ron",
        "(agent_port: 4100, models_dir: \"my-models\", vision: (sense_my_pos: true, h_view_cone: 180))",
    );
    let env = tmp.write(
        "env.ron",
        "(vision: (h_view_cone: 360), physics: (solver: (substeps: 2), field_scene: \"f/field.rsg\"))",
    );
    let file = tmp.write(
        "cli.ron",
        "(seed: 9, vision: (add_noise: false), monitor: (trainer_secret: \"s3cret\"))",
    );
    let loaded = Config::from_sources(&ConfigSources {
        user: Some(UserFiles {
            home: Some(home.clone()),
            xdg_config_home: None,
            env_config: Some(env.clone()),
        }),
        file: Some(file.clone()),
    })
    .expect("sources load");
    let cfg = &loaded.config;
    assert!(cfg.sync_mode);
    assert!(
        cfg.real_time,
        "spark.rb's sync mode keeps the real-time timer"
    );
    assert_eq!(cfg.agent_port, 4100);
    assert_eq!(cfg.monitor.monitor_step, 4);
    assert_eq!(cfg.monitor_port, 3200);
    assert!(cfg.vision.sense_my_pos);
    assert_eq!(cfg.vision.h_view_cone, 360);
    assert_eq!(cfg.vision.v_view_cone, 120);
    assert!(!cfg.vision.add_noise);
    assert_eq!(cfg.seed, Some(9));
    assert_eq!(cfg.physics.solver.substeps, 2);
    assert_eq!(
        cfg.physics.solver.internal_pgs_iterations, 100,
        "a section laid over keeps the keys it does not name"
    );
    // Relative input paths are taken from their file's directory.
    assert_eq!(
        cfg.models_dir.as_deref(),
        Some(home.join(".config/rcss3d/my-models").as_path())
    );
    assert_eq!(
        cfg.physics.field_scene.as_deref(),
        Some(tmp.0.join("f/field.rsg").as_path())
    );
    let origins: Vec<&str> = loaded.sources.iter().map(|s| s.origin.as_str()).collect();
    let env_origin = format!("{} ($RCSS3D_CONFIG)", env.display());
    let file_origin = file.display().to_string();
    assert_eq!(
        origins,
        [
            "~/.simspark/spark.rb",
            "~/.config/rcss3d/server.ron",
            env_origin.as_str(),
            file_origin.as_str(),
        ]
    );
    assert_eq!(
        loaded.sources[0].settings[0],
        "$agentSyncMode = true -> sync_mode = true"
    );
    assert_eq!(
        loaded.sources[3].to_string(),
        format!(
            "{file_origin}: seed = 9, vision.add_noise = false, monitor.trainer_secret = (hidden)"
        )
    );
    assert_eq!(cfg.monitor.trainer_secret.as_deref(), Some("s3cret"));

    // Without the user's files only --config counts.
    let plain = Config::from_sources(&ConfigSources {
        user: None,
        file: Some(file),
    })
    .expect("loads");
    assert!(!plain.config.sync_mode);
    assert_eq!(plain.config.agent_port, 3100);
    assert_eq!(plain.sources.len(), 1);
}

#[test]
fn source_errors_name_their_file() {
    let tmp = TempDir::new("errors");
    let home = tmp.0.join("home");
    let user = |env_config: Option<PathBuf>| ConfigSources {
        user: Some(UserFiles {
            home: Some(home.clone()),
            xdg_config_home: None,
            env_config,
        }),
        file: None,
    };
    // Missing per-user files are skipped.
    let loaded = Config::from_sources(&user(None)).expect("no files");
    assert!(loaded.sources.is_empty());
    // A file named by $RCSS3D_CONFIG must exist.
    let missing = tmp.0.join("missing.ron");
    let err = Config::from_sources(&user(Some(missing))).expect_err("missing");
    assert!(err.to_string().contains("missing.ron"), "{err}");
    // A bad key in the per-user file: its path, line and column.
    tmp.write(
        "home/.config/rcss3d/server.ron",
        "(\n  vision: (sense_my_pos: true),\n  agnet_port: 1,\n)",
    );
    let err = Config::from_sources(&user(None)).expect_err("unknown key");
    let text = err.to_string();
    assert!(text.contains("server.ron:3:"), "{text}");
    assert!(text.contains("agnet_port"), "{text}");
    // A value out of range in the combination names the files.
    tmp.write("home/.config/rcss3d/server.ron", "(step: 0.0)");
    let err = Config::from_sources(&user(None)).expect_err("bad step");
    assert!(
        err.to_string()
            .starts_with("~/.config/rcss3d/server.ron: step"),
        "{err}"
    );
}

#[test]
fn a_duration_switched_off_with_the_old_zero_is_refused_naming_its_key() {
    for (text, key) in [
        ("(agent_idle_timeout_secs: 0)", "agent_idle_timeout_secs"),
        ("(agent_idle_timeout_secs: 0.0)", "agent_idle_timeout_secs"),
        ("(monitor: (evict_lag_secs: 0.0))", "evict_lag_secs"),
        ("(monitor: (stall_timeout_secs: 0.0))", "stall_timeout_secs"),
    ] {
        let err = Config::from_ron(text, "p.ron")
            .expect_err("0 is not off")
            .to_string();
        assert!(err.contains(key) && err.contains("None"), "{text}: {err}");
    }
    let off = Config::from_ron(
        "(agent_idle_timeout_secs: None, monitor: (evict_lag_secs: None))",
        "p.ron",
    )
    .expect("None is off");
    assert_eq!(off.agent_idle_timeout(), None);
    assert_eq!(off.monitor.evict_lag_secs, None);
}

#[test]
fn a_limit_or_sentinel_spelled_with_the_old_zero_is_refused_naming_its_key() {
    for (text, key) in [
        ("(max_agent_bytes_per_sec: 0)", "max_agent_bytes_per_sec"),
        ("(seed: 0)", "seed"),
        ("(monitor: (commands_per_step: 0))", "commands_per_step"),
        ("(monitor: (max_auth_failures: 0))", "max_auth_failures"),
        ("(monitor: (send_buffer_bytes: 0))", "send_buffer_bytes"),
        ("(vision: (interval: 0))", "interval"),
        ("(sync_timeout_ms: 0)", "sync_timeout_ms"),
    ] {
        let err = Config::from_ron(text, "p.ron")
            .expect_err("0 is not None")
            .to_string();
        assert!(
            err.starts_with("p.ron: ") && err.contains(key) && err.contains("None"),
            "{text}: {err}"
        );
    }
    let none = Config::from_ron(
        "(max_agent_bytes_per_sec: None, seed: None, vision: (interval: None), \
         monitor: (commands_per_step: None, max_auth_failures: None, send_buffer_bytes: None))",
        "p.ron",
    )
    .expect("None is the spelling");
    assert_eq!(none.max_agent_bytes_per_sec, None);
    assert_eq!(none.seed, None);
    assert_eq!(none.vision.interval, None);
    let m = &none.monitor;
    assert_eq!(
        (
            m.commands_per_step,
            m.max_auth_failures,
            m.send_buffer_bytes
        ),
        (None, None, None)
    );
    let plain = Config::from_ron(
        "(max_agent_bytes_per_sec: 1000, seed: 1, vision: (interval: 1), \
         monitor: (commands_per_step: 1, max_auth_failures: 1, send_buffer_bytes: 4096))",
        "p.ron",
    )
    .expect("plain values");
    assert_eq!(plain.max_agent_bytes_per_sec, Some(1000));
    assert_eq!(plain.seed, Some(1));
    assert_eq!(plain.vision.interval, Some(1));
    let m = &plain.monitor;
    assert_eq!(
        (
            m.commands_per_step,
            m.max_auth_failures,
            m.send_buffer_bytes
        ),
        (Some(1), Some(1), Some(4096))
    );
}

#[test]
fn optional_fields_take_plain_values_or_some() {
    let plain = Config::from_ron(
        "(sync_timeout_ms: 2000, monitor: (trainer_secret: \"s3cret\"))",
        "p.ron",
    )
    .expect("plain values parse");
    assert_eq!(plain.sync_timeout_ms, Some(2000));
    assert_eq!(plain.monitor.trainer_secret.as_deref(), Some("s3cret"));
    let wrapped = Config::from_ron("(sync_timeout_ms: Some(2000))", "s.ron").expect("Some parses");
    assert_eq!(wrapped.sync_timeout_ms, Some(2000));
    let none = Config::from_ron("(sync_timeout_ms: None)", "n.ron").expect("None parses");
    assert_eq!(none.sync_timeout_ms, None);
}

#[test]
fn counts_the_server_divides_by_and_noise_are_checked_at_load() {
    for (text, says) in [
        (
            "(monitor: (monitor_step: 0))",
            "monitor: monitor_step must be >= 1",
        ),
        ("(monitor: (log_step: 0))", "monitor: log_step must be >= 1"),
        (
            "(physics: (solver: (substeps: 0)))",
            "physics: solver.substeps must be >= 1",
        ),
        (
            "(physics: (contacts: (robot_ground_layer: -0.001)))",
            "physics: contacts.robot_ground_layer must be a depth >= 0",
        ),
        (
            "(physics: (contacts: (ball_ground_layer: -1.0)))",
            "physics: contacts.ball_ground_layer must be a depth >= 0",
        ),
        ("(vision: (h_view_cone: 400))", "vision: view cones"),
        ("(vision: (sigma_distance: -1.0))", "vision: sigma_distance"),
    ] {
        let err = Config::from_ron(text, "r.ron").expect_err(text);
        assert!(err.to_string().contains(says), "{text}: {err}");
    }
    Config::default()
        .validate("defaults")
        .expect("the defaults are in range");
}
