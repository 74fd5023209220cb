//! The one parser of physics settings given on the command line: a RON
//! `physics:` section as in a configuration file (`conf/server.ron`),
//! keys not given keeping their defaults, an option taking its plain
//! value, e.g. `'(joints: (motor_gain: 1e4), contacts: (ground_slip: None))'`.

use rcss3d::sim::world::PhysicsConfig;

/// Parses a physics section, returned with its text as the label.
pub fn try_parse(text: &str) -> Result<(String, PhysicsConfig), ron::error::SpannedError> {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str(text)
        .map(|cfg| (text.to_owned(), cfg))
}

/// [`try_parse`] for a subcommand's argument: a malformed section ends
/// the tool (exit 2) with the error, the keys of the section it is in
/// listed.
pub fn parse(text: &str) -> (String, PhysicsConfig) {
    match try_parse(text) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("physics overrides `{text}`: {e}");
            std::process::exit(2);
        }
    }
}

/// The settings a subcommand was given, or the defaults when none was.
pub fn or_defaults(configs: Vec<(String, PhysicsConfig)>) -> Vec<(String, PhysicsConfig)> {
    if configs.is_empty() {
        vec![("defaults".into(), PhysicsConfig::default())]
    } else {
        configs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_sets_its_keys_and_keeps_the_others() {
        let (label, cfg) = try_parse("(joints: (motor_gain: 1e4), contacts: (ground_slip: None))")
            .expect("parses");
        assert!(label.contains("motor_gain"));
        assert_eq!(cfg.joints.motor_gain, 1e4);
        assert_eq!(cfg.contacts.ground_slip, None);
        assert_eq!(cfg.solver, PhysicsConfig::default().solver);
        let (_, cfg) = try_parse("(joints: (stretch_erp: 0.3))").expect("a plain option value");
        assert_eq!(cfg.joints.stretch_erp, Some(0.3));
    }

    #[test]
    fn an_unknown_key_is_an_error() {
        assert!(try_parse("(motor_gain: 1e4)").is_err());
    }
}
