//! `simspark`: the same program as `rcss3d` under the reference engine's
//! name (tools start it or look for a process of that name); arguments
//! it does not know are skipped as the reference skips them. See
//! [`rcss3d_cli`].

/// As in `rcss3d`: the solver's per-step work matrices come from
/// per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rcss3d_cli::run(rcss3d_cli::Program::Simspark)
}
