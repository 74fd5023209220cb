//! `rcssserver3d`: the same program as `rcss3d` under the reference
//! server's name, so scripts and tools that start or look for
//! `rcssserver3d` find it; arguments it does not know are skipped as the
//! reference skips them. See [`rcss3d_cli`].

/// As in `rcss3d`: the solver's per-step work matrices come from
/// per-thread pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    rcss3d_cli::run(rcss3d_cli::Program::Rcssserver3d)
}
