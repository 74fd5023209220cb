//! `rcss3d`: the server and its subcommands (`ctl`, `watch`, `check-log`,
//! `replay`); see [`rcss3d_cli`].

/// Rapier allocates and frees its solver's work matrices every step; this
/// allocator serves those from per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rcss3d_cli::run(rcss3d_cli::Program::Rcss3d)
}
