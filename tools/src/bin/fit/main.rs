//! The physics fitting kit: replays of the reference's recorded gaits and
//! probes of our physical world, to compare settings of the `physics:`
//! section against the reference (rcssserver3d 0.7.1 on ODE) and to find
//! better ones. Each subcommand prints; none asserts (the acceptance
//! checks are `tests/physics/`). Physics settings are given as RON
//! `physics:` sections, parsed in one place (`overrides.rs`). The replay
//! itself is the tools library's (`tools/src/replay.rs`), the one the
//! physics tests use.
//!
//! ```text
//! cargo run --release -p rcss3d-tools --bin fit -- SUBCOMMAND [ARGS]...
//! ```
//!
//! | subcommand | what it prints |
//! |---|---|
//! | `gaits` | open-loop replays of the recorded gaits against the reference (`gaits.rs`) |
//! | `joints` | one replay's per-row figures beside the reference's, CSV (`joints.rs`) |
//! | `onestep` | the error a few steps from the reference's recorded states (`onestep.rs`) |
//! | `oracle` | replays with parts of the state pulled to the reference's (`oracle.rs`) |
//! | `convergence` | how far a setting's solve is from converged (`convergence.rs`) |
//! | `model-dump` | the robot models as the ODE replica reads them (`model_dump.rs`) |
//! | `probe` | one robot standing, or one motor without gravity (`probe.rs`) |
//!
//! The ODE replica of the reference's physics is `tools/ode-replica`.

mod convergence;
mod gaits;
mod joints;
mod model_dump;
mod onestep;
mod oracle;
mod overrides;
mod probe;

fn main() {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        Some("gaits") => gaits::run(rest),
        Some("joints") => joints::run(rest),
        Some("onestep") => onestep::run(rest),
        Some("oracle") => oracle::run(rest),
        Some("convergence") => convergence::run(rest),
        Some("model-dump") => model_dump::run(rest),
        Some("probe") => probe::run(rest),
        _ => {
            eprintln!(
                "usage: fit SUBCOMMAND [ARGS]...\n\
                 subcommands: gaits, joints, onestep, oracle, convergence, model-dump, probe\n\
                 (each documented at the top of tools/src/bin/fit/SUBCOMMAND.rs)"
            );
            std::process::exit(2);
        }
    }
}
