//! The server binary as a child process on free loopback ports, for what
//! only a process shows: signals, memory as the kernel counts it, the
//! command line. Waits are woken by events (the ready line, a process
//! exit through a pidfd, a file change through inotify), never by polling.

use std::io::{BufRead, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The `rcss3d` binary of this build.
pub const BIN: &str = env!("CARGO_BIN_EXE_rcss3d");

/// How long a server binary may take to open its ports.
const STARTUP: Duration = Duration::from_secs(20);

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// The server binary listening on two free loopback ports. Killed if the
/// test ends without stopping it.
pub struct ServerProcess {
    pub child: Child,
    pub agent_port: u16,
    pub monitor_port: u16,
    /// Copies the server's stdout after its ready line; ends with it.
    stdout: Option<std::thread::JoinHandle<()>>,
}

impl ServerProcess {
    /// Starts `rcss3d --no-user-config --bind 127.0.0.1 --agent-port 0
    /// --monitor-port 0` with what `configure` adds (the test's flags,
    /// environment, stderr) and returns once it has printed its ready line
    /// (both ports listen; the line names the ports bound). Its stdout is
    /// dropped. The user's own settings files (a sync mode in
    /// `~/.simspark/spark.rb`, say) do not reach test servers.
    pub fn start(configure: impl FnOnce(&mut Command)) -> ServerProcess {
        Self::start_with_stdout(None, configure)
    }

    /// [`ServerProcess::start`], the server's stdout (the ready line
    /// included) copied to `stdout`; the copy is complete once the
    /// process has exited and been waited for ([`Self::terminate`],
    /// [`Self::wait_exit`]).
    pub fn start_with_stdout(
        stdout: Option<std::fs::File>,
        configure: impl FnOnce(&mut Command),
    ) -> ServerProcess {
        let mut cmd = Command::new(BIN);
        cmd.arg("--no-user-config")
            .args(["--bind", "127.0.0.1"])
            .args(["--agent-port", "0"])
            .args(["--monitor-port", "0"]);
        configure(&mut cmd);
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .expect("server binary starts");
        let (ready, copier) = read_ready(&mut child, stdout);
        let Some(ready) = ready else {
            let _ = child.kill();
            let status = child.wait().expect("wait");
            panic!("server did not come up (exit status {status})");
        };
        let port = |key: &str| -> u16 {
            ready[key]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or_else(|| panic!("no {key} in the ready line {ready}"))
        };
        ServerProcess {
            agent_port: port("agent_port"),
            monitor_port: port("monitor_port"),
            child,
            stdout: Some(copier),
        }
    }

    /// The agent port's address.
    pub fn agent_addr(&self) -> std::net::SocketAddr {
        ([127, 0, 0, 1], self.agent_port).into()
    }

    /// The monitor port's address, as the command line takes it.
    pub fn monitor_addr(&self) -> String {
        format!("127.0.0.1:{}", self.monitor_port)
    }

    /// Sends SIGTERM and waits up to `within` for the exit: its status,
    /// or `None` (and the process killed) if it did not exit in time.
    pub fn terminate(&mut self, within: Duration) -> Option<ExitStatus> {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM not delivered");
        let status = self.exit_within(within);
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.stdout_copied();
        status
    }

    /// Waits for the process to exit by itself, failing the test after
    /// `within`.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let status = self.exit_within(within).expect("server still running");
        self.stdout_copied();
        status
    }

    fn exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        exit_within(&mut self.child, within)
    }

    /// Waits for the copy of stdout to end (the process has exited).
    fn stdout_copied(&mut self) {
        if let Some(copier) = self.stdout.take() {
            let _ = copier.join();
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stdout_copied();
    }
}

/// Waits for the ready line a server started with a piped stdout prints
/// once both ports listen. Returns the line (`None` if the process
/// exited first or took longer than the start-up limit) and the thread that goes on
/// copying its stdout (the ready line included) to `sink`, if given, until
/// the process exits.
pub fn read_ready(
    child: &mut Child,
    sink: Option<std::fs::File>,
) -> (Option<serde_json::Value>, std::thread::JoinHandle<()>) {
    let out = child.stdout.take().expect("piped stdout");
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let copier = std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(out);
        let mut sink = sink;
        let mut line = String::new();
        let mut ready = Some(ready_tx);
        while matches!(lines.read_line(&mut line), Ok(n) if n > 0) {
            if line.starts_with(r#"{"event":"ready""#) {
                if let Some(tx) = ready.take() {
                    let _ = tx.send(line.clone());
                }
            }
            if let Some(f) = sink.as_mut() {
                let _ = f.write_all(line.as_bytes());
            }
            line.clear();
        }
    });
    // The line, or the copier's end (the process exited) or the limit.
    let ready = ready_rx
        .recv_timeout(STARTUP)
        .ok()
        .map(|line| serde_json::from_str(&line).expect("ready line is JSON"));
    (ready, copier)
}

/// Waits up to `within` for `child` to exit: its status, or `None` if it
/// is still running. Woken by the exit itself (a pidfd).
pub fn exit_within(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + within;
    if let Some(status) = child.try_wait().expect("wait") {
        return Some(status);
    }
    // The child is not reaped yet, so its pid is still its own.
    let exit = ExitEvent::of(child.id());
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        exit.wait(left);
    }
}

/// A child process's exit as an event (a pidfd): readable once it has
/// exited.
pub struct ExitEvent(OwnedFd);

impl ExitEvent {
    /// The exit of the child `pid`, which must not be reaped yet.
    pub fn of(pid: u32) -> ExitEvent {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        assert!(fd >= 0, "pidfd_open: {}", std::io::Error::last_os_error());
        // SAFETY: a new fd that nothing else owns.
        ExitEvent(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }

    /// Blocks until the process has exited or `limit` has passed.
    pub fn wait(&self, limit: Duration) {
        poll_readable(self.0.as_raw_fd(), limit);
    }
}

/// Blocks until `fd` is readable or `limit` has passed.
fn poll_readable(fd: i32, limit: Duration) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128 - 1) as i32 + 1;
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) };
}

/// Changes to the files of one directory (inotify): a wait for a file to
/// reach some state, woken by each write, creation or rename there.
pub struct DirWatch(OwnedFd);

impl DirWatch {
    /// Watches the directory `dir`.
    pub fn new(dir: &Path) -> DirWatch {
        // SAFETY: plain syscalls; the fd is checked and then owned.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).expect("path");
        let mask = libc::IN_CREATE | libc::IN_MODIFY | libc::IN_CLOSE_WRITE | libc::IN_MOVED_TO;
        // SAFETY: a valid fd and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) };
        assert!(
            wd >= 0,
            "inotify_add_watch {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
        DirWatch(fd)
    }

    /// Watches the directory `file` is in.
    pub fn of_file(file: &Path) -> DirWatch {
        DirWatch::new(file.parent().expect("a file in a directory"))
    }

    /// Waits until `done()` holds, up to `within`; whether it does. Checks
    /// at once and after each change in the directory.
    pub fn until(&self, within: Duration, mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if done() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            poll_readable(self.0.as_raw_fd(), left);
            self.drain();
        }
    }

    /// [`DirWatch::until`] for async tests: the runtime's reactor wakes
    /// the wait.
    pub async fn until_async(&self, within: Duration, mut done: impl FnMut() -> bool) -> bool {
        // SAFETY: the fd stays open (owned by `self`) for as long as this
        // registration, which ends with the function.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(
                self.0.as_raw_fd(),
                tokio::io::Interest::READABLE,
            )
        }
        .expect("inotify fd in the reactor");
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if done() {
                return true;
            }
            match tokio::time::timeout_at(deadline, fd.readable()).await {
                Err(_) => return false,
                Ok(guard) => {
                    let mut guard = guard.expect("readable");
                    self.drain();
                    guard.clear_ready();
                }
            }
        }
    }

    /// Reads the pending events (only their arrival matters).
    fn drain(&self) {
        let mut buf = [0u8; 4096];
        // SAFETY: reads into a buffer of its length; non-blocking fd.
        while unsafe { libc::read(self.0.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
}

/// The text of `path` (empty if it does not exist yet).
pub fn read_text(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned()
}
