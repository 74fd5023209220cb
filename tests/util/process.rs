//! The server binary as a child process on free loopback ports, for what
//! only a process shows: signals, memory as the kernel counts it, the
//! command line.

use std::process::{Child, Command, ExitStatus};
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
}

impl ServerProcess {
    /// Starts `rcss3d --no-user-config --bind 127.0.0.1 --agent-port A
    /// --monitor-port M` with what `configure` adds (the test's flags,
    /// environment, where the output goes) and returns once both ports
    /// accept connections. The user's own settings files (a sync mode in
    /// `~/.simspark/spark.rb`, say) do not reach test servers.
    pub fn start(configure: impl FnOnce(&mut Command)) -> ServerProcess {
        let agent_port = free_port();
        let monitor_port = free_port();
        let mut cmd = Command::new(BIN);
        cmd.arg("--no-user-config")
            .args(["--bind", "127.0.0.1"])
            .args(["--agent-port", &agent_port.to_string()])
            .args(["--monitor-port", &monitor_port.to_string()]);
        configure(&mut cmd);
        let child = cmd.spawn().expect("server binary starts");
        let mut server = ServerProcess {
            child,
            agent_port,
            monitor_port,
        };
        let start = Instant::now();
        for port in [agent_port, monitor_port] {
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                if let Ok(Some(status)) = server.child.try_wait() {
                    panic!("server exited at start: {status}");
                }
                assert!(start.elapsed() < STARTUP, "server did not come up");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        server
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
        status
    }

    /// Waits for the process to exit by itself, failing the test after
    /// `within`.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        self.exit_within(within).expect("server still running")
    }

    fn exit_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            if start.elapsed() >= within {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
