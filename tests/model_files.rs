//! Crafted files in the server's input, against the server binary: robot
//! models nested far too deep, a FIFO, a symlink to `/dev/zero`, a symlink
//! loop or a 50 MB file in `--models-dir`, and configuration files that
//! are devices, are refused at the start with one line naming the file,
//! in bounded memory and at once; an import bomb asked for by an agent is
//! refused while the match goes on (another agent's frames keep coming)
//! and the server's memory stays bounded.

mod util;

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use util::honest::Honest;
use util::process::{free_port, read_text, DirWatch, ExitEvent, ServerProcess, BIN};
use util::{Scratch, TestAgent};

/// The peak memory the server may reach on any input.
const SERVER_PEAK_KB: u64 = 256 * 1024;

/// A server run that ended by itself: whether it succeeded, its stderr,
/// how long it ran, and an upper bound of its peak memory.
struct Ended {
    success: bool,
    stderr: String,
    took: Duration,
    peak_kb: u64,
}

/// Starts the server binary with `args` (and `env`) and waits for it to
/// end, at most 20 s (then kills it and fails the test). The peak memory
/// is `wait4`'s `ru_maxrss`: an upper bound, since the kernel also counts
/// this test process's memory at the spawn.
fn server_ends(args: &[&OsStr], env: &[(&str, &Path)], dir: &Path) -> Ended {
    let err = dir.join("server.stderr");
    let mut cmd = Command::new(BIN);
    cmd.args(["--bind", "127.0.0.1", "--agent-port"])
        .arg(free_port().to_string())
        .arg("--monitor-port")
        .arg(free_port().to_string())
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stderr(std::fs::File::create(&err).expect("stderr file"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let t0 = Instant::now();
    // Reaped by `wait4` below, which std does not know of.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("server starts");
    let pid = i32::try_from(child.id()).expect("pid");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let exit = ExitEvent::of(child.id());
    loop {
        // SAFETY: wait4 on our own child, without blocking, writes the
        // two out values.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "wait4: {}", std::io::Error::last_os_error());
        let left = Duration::from_secs(20).saturating_sub(t0.elapsed());
        if left.is_zero() {
            // SAFETY: signals our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!(
                "the server neither refused the file nor ended in 20 s: {}",
                String::from_utf8_lossy(&std::fs::read(&err).unwrap_or_default())
            );
        }
        exit.wait(left);
    }
    Ended {
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        stderr: String::from_utf8_lossy(&std::fs::read(&err).unwrap_or_default()).into_owned(),
        took: t0.elapsed(),
        peak_kb: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }
}

/// A models directory holding only `name` with `text`.
fn models_with(root: &Path, tag: &str, name: &str, text: &str) -> std::path::PathBuf {
    let dir = root.join(tag);
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(name), text).expect("write");
    dir
}

/// The server refuses to start on `models`, with one error line naming
/// `names` and `why`, quickly and in bounded memory.
fn refused_at_start(models: &Path, names: &str, why: &str, scratch: &Path) {
    let run = server_ends(
        &[
            "--no-user-config".as_ref(),
            "--models-dir".as_ref(),
            models.as_os_str(),
        ],
        &[],
        scratch,
    );
    assert!(!run.success, "the server started on {models:?}");
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(names) && l.contains(why))
        .collect();
    assert_eq!(errors.len(), 1, "{why}:\n{}", run.stderr);
    assert!(!run.stderr.contains("overflow"), "{}", run.stderr);
    assert!(run.took < Duration::from_secs(5), "took {:?}", run.took);
    assert!(run.peak_kb <= SERVER_PEAK_KB, "peak {} kB", run.peak_kb);
    println!(
        "{why}: refused in {:?}, peak <= {} kB: {}",
        run.took, run.peak_kb, errors[0]
    );
}

#[test]
fn crafted_model_files_are_refused_at_the_start_with_one_line() {
    let scratch = Scratch::new("models");
    let root = &scratch.0;
    // As deep as fits in a model file's size limit (the scene reader's own
    // test goes to 100,000 levels).
    let n = 60_000;
    let deep = models_with(
        root,
        "deep",
        "deep.rsg",
        &format!(
            "(RSG 0 1)\n({}{})",
            "(nd Transform ".repeat(n),
            ")".repeat(n)
        ),
    );
    refused_at_start(&deep, "deep.rsg:2", "nested more than 100 levels", root);
    let eval = models_with(
        root,
        "eval",
        "eval.rsg",
        &format!(
            "(RSG 0 1)\n((nd Transform (setLocalPos {}1{} 0 0)))",
            "(eval 1 + ".repeat(10_000),
            ")".repeat(10_000)
        ),
    );
    refused_at_start(&eval, "eval.rsg:2", "nested more than 100 levels", root);
    let big = models_with(
        root,
        "big",
        "big.rsg",
        &format!("(RSG 0 1)\n({})", "(nd Transform)".repeat(50 << 16)),
    );
    refused_at_start(&big, "big.rsg", "larger than the limit", root);

    let fifo_dir = root.join("fifo");
    std::fs::create_dir_all(&fifo_dir).expect("dir");
    let fifo = fifo_dir.join("x.rsg");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("path");
    // SAFETY: mkfifo reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused_at_start(&fifo_dir, "x.rsg", "not a regular file", root);

    let zero = root.join("zero");
    std::fs::create_dir_all(&zero).expect("dir");
    std::os::unix::fs::symlink("/dev/zero", zero.join("z.rsg")).expect("symlink");
    refused_at_start(&zero, "z.rsg", "not a regular file", root);

    let links = root.join("links");
    std::fs::create_dir_all(&links).expect("dir");
    std::os::unix::fs::symlink(links.join("b.rsg"), links.join("a.rsg")).expect("symlink");
    std::os::unix::fs::symlink(links.join("a.rsg"), links.join("b.rsg")).expect("symlink");
    refused_at_start(&links, "links/", "symbolic links", root);

    // A directory loop is walked once: the server starts.
    let looped = root.join("looped");
    std::fs::create_dir_all(looped.join("sub")).expect("dir");
    std::os::unix::fs::symlink(&looped, looped.join("sub/back")).expect("symlink");
    let mut server = ServerProcess::start(|c| {
        c.arg("--models-dir").arg(&looped).stderr(Stdio::null());
    });
    assert!(server.terminate(Duration::from_secs(10)).is_some());
}

#[test]
fn configuration_files_that_are_devices_are_refused_with_one_line() {
    let scratch = Scratch::new("config-dev");
    let conf = scratch.0.join("server.ron");
    std::os::unix::fs::symlink("/dev/zero", &conf).expect("symlink");
    let run = server_ends(
        &[
            "--no-user-config".as_ref(),
            "--config".as_ref(),
            conf.as_os_str(),
        ],
        &[],
        &scratch.0,
    );
    assert!(!run.success);
    assert!(
        run.stderr.contains("server.ron") && run.stderr.contains("not a regular file"),
        "{}",
        run.stderr
    );
    assert!(run.peak_kb <= SERVER_PEAK_KB, "peak {} kB", run.peak_kb);
    // `~/.simspark/spark.rb` as a link to /dev/zero.
    let home = scratch.0.join("home");
    std::fs::create_dir_all(home.join(".simspark")).expect("dir");
    std::os::unix::fs::symlink("/dev/zero", home.join(".simspark/spark.rb")).expect("symlink");
    let run = server_ends(
        &[],
        &[("HOME", &home), ("XDG_CONFIG_HOME", &home)],
        &scratch.0,
    );
    assert!(!run.success);
    assert!(
        run.stderr.contains("spark.rb") && run.stderr.contains("not a regular file"),
        "{}",
        run.stderr
    );
    assert!(run.peak_kb <= SERVER_PEAK_KB, "peak {} kB", run.peak_kb);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_bomb_an_agent_asks_for_is_refused_while_the_match_goes_on() {
    let scratch = Scratch::new("bomb");
    let models = scratch.0.join("models");
    std::fs::create_dir_all(models.join("bomb")).expect("dir");
    // Nine files, each importing the next eight times: 8^8 imports.
    for i in 0..9 {
        let body = if i == 8 {
            "(nd Transform)".to_owned()
        } else {
            format!("(importScene bomb/b{}.rsg)", i + 1).repeat(8)
        };
        std::fs::write(
            models.join(format!("bomb/b{i}.rsg")),
            format!("(RSG 0 1)\n({body})"),
        )
        .expect("write");
    }
    let stderr = scratch.0.join("server.stderr");
    let err = std::fs::File::create(&stderr).expect("stderr file");
    let mut server = ServerProcess::start(|c| {
        c.arg("--models-dir")
            .arg(&models)
            .env("NO_COLOR", "1")
            .stderr(err);
    });
    let honest = Honest::start(server.agent_addr(), "Honest").await;
    let mut attackers = Vec::new();
    for _ in 0..3 {
        let mut a = TestAgent::connect(server.agent_addr()).await;
        a.send("(scene bomb/b0.rsg)").await;
        attackers.push(a);
    }
    let refused = DirWatch::of_file(&stderr)
        .until_async(Duration::from_secs(20), || {
            read_text(&stderr).matches("scene refused").count() >= 3
        })
        .await;
    let text = read_text(&stderr);
    assert!(refused, "{text}");
    // A second of match after the refusals, the honest agent playing on.
    honest.played(50).await;
    let peak = rcss3d::procfs::status_kib(server.child.id(), "VmHWM").expect("VmHWM");
    let report = honest.finish().await;
    let refusals: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("scene refused"))
        .collect();
    assert!(
        refusals
            .iter()
            .all(|l| l.contains("more than 2000 imports")),
        "{text}"
    );
    assert!(report.max_gap < Duration::from_millis(500), "{report:?}");
    assert!(peak <= SERVER_PEAK_KB, "server peak {peak} kB");
    println!(
        "import bomb: refused 3 times; honest agent {} frames, longest gap {:?}; server peak {peak} kB\n{}",
        report.frames, report.max_gap, refusals[0]
    );
    drop(attackers);
    let _ = server.terminate(Duration::from_secs(10));
}
