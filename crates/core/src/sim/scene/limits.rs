//! The limits of scene loading: what one directory of scene files may
//! hold, and what one expansion of a scene may cost (nodes, imports,
//! steps, nesting, value length). An untrusted model file within them
//! loads in bounded memory and time, without deep recursion; one beyond
//! them is refused with its file and line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{at, SceneError};

/// Bytes one scene file or data table may hold (the Nao's largest is
/// under 10 kB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Scene files and tables one directory tree may hold.
pub const MAX_FILES: usize = 10_000;

/// Bytes all scene files and tables of a directory tree may hold.
pub const MAX_TOTAL_BYTES: u64 = 64 << 20;

/// Nodes one expanded scene may hold (a Nao has about 120).
pub const MAX_NODES: usize = 20_000;

/// `importScene` statements one expansion may run (a Nao runs about 30).
pub const MAX_IMPORTS: usize = 2_000;

/// Statements and expressions one expansion may evaluate: the work, and
/// the time on the simulation thread, one scene request can cost.
pub const MAX_STEPS: usize = 500_000;

/// Nesting of statements one expansion may reach, imports included (each
/// file's own nesting is bounded by the parser's).
pub const MAX_LEVELS: usize = 256;

/// Bytes one evaluated value may hold (`join` of a `join` of ... doubles).
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// Bytes of values one expansion may produce in all (each `eval` reads
/// its text once, so this bounds the parsing work too).
pub const MAX_VALUE_TOTAL: usize = 16 << 20;

/// What one expansion has used of its limits.
#[derive(Default)]
pub(super) struct Budget {
    pub(super) imports: usize,
    steps: usize,
    bytes: usize,
}

impl Budget {
    pub(super) fn step(&mut self, file: &Arc<str>, line: usize) -> Result<(), SceneError> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(at(
                file,
                line,
                format!("the scene takes more than {MAX_STEPS} steps to expand"),
            ));
        }
        Ok(())
    }

    /// Counts `n` bytes of values produced.
    pub(super) fn bytes(
        &mut self,
        n: usize,
        file: &Arc<str>,
        line: usize,
    ) -> Result<(), SceneError> {
        self.bytes += n;
        if self.bytes > MAX_VALUE_TOTAL {
            return Err(at(
                file,
                line,
                format!("the scene's values add up to more than {MAX_VALUE_TOTAL} bytes"),
            ));
        }
        Ok(())
    }
}

/// Identifies a directory however it was reached (device and inode on
/// Unix, the canonical path elsewhere).
pub(super) fn dir_key(meta: &std::fs::Metadata, path: &Path) -> (u64, u64, PathBuf) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        (meta.dev(), meta.ino(), PathBuf::new())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        (
            0,
            0,
            path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::SceneLibrary;
    use super::*;

    fn lib(files: &[(&str, String)]) -> Result<SceneLibrary, SceneError> {
        SceneLibrary::from_files(files.iter().map(|(p, t)| (*p, t.as_str())))
    }

    fn refused(files: &[(&str, String)], want: &str) -> String {
        let e = match lib(files) {
            Err(e) => e,
            Ok(l) => l.instantiate(files[0].0, &[]).expect_err("refused"),
        };
        let e = e.to_string();
        assert!(e.contains(want), "{e}");
        assert!(e.starts_with(files[0].0) || e.contains(".rsg:"), "{e}");
        e
    }

    #[test]
    fn no_nesting_depth_overflows_the_stack() {
        let n = 100_000;
        let nd = format!(
            "(RSG 0 1)\n({}{})",
            "(nd Transform ".repeat(n),
            ")".repeat(n)
        );
        refused(&[("deep.rsg", nd)], "nested more than 100 levels");
        let eval = format!(
            "(RSG 0 1)\n((nd Transform (setLocalPos {}1{} 0 0)))",
            "(eval 1 + ".repeat(n),
            ")".repeat(n)
        );
        refused(&[("eval.rsg", eval)], "nested more than 100 levels");
        let join = format!(
            "(RSG 0 1)\n((nd Transform (setName {}a{})))",
            "(join a ".repeat(10_000),
            ")".repeat(10_000)
        );
        refused(&[("join.rsg", join)], "nested more than 100 levels");
        // Parentheses and signs inside one quoted expression (as many as
        // fit in a value).
        let quoted = format!(
            "(RSG 0 1)\n((nd Transform (setLocalPos (eval \"{}1{}\") 0 0)))",
            "(-".repeat(20_000),
            ")".repeat(20_000)
        );
        refused(&[("quoted.rsg", quoted)], "nested more than 200 levels");
        // Within the limits, nesting works.
        let ok = format!(
            "(RSG 0 1)\n({}{})",
            "(nd Transform ".repeat(90),
            ")".repeat(90)
        );
        let t = lib(&[("ok.rsg", ok)])
            .expect("parse")
            .instantiate("ok.rsg", &[])
            .expect("90 levels");
        assert_eq!(t.nodes.len(), 91);
    }

    #[test]
    fn an_import_breadth_bomb_is_refused_quickly() {
        // Nine files, each importing the next eight times: 8^8 imports.
        let mut files = Vec::new();
        let names: Vec<String> = (0..9).map(|i| format!("b{i}.rsg")).collect();
        for i in 0..9 {
            let body = if i == 8 {
                "(nd Transform)".to_owned()
            } else {
                format!("(importScene {})", names[i + 1]).repeat(8)
            };
            files.push((names[i].as_str(), format!("(RSG 0 1)\n({body})")));
        }
        let t0 = Instant::now();
        let e = refused(&files, "more than 2000 imports");
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
        assert!(e.starts_with("b"), "{e}");
    }

    #[test]
    fn node_count_steps_and_value_length_are_bounded() {
        let wide = format!("(RSG 0 1)\n({})", "(nd Transform)".repeat(30_000));
        refused(&[("wide.rsg", wide)], "more than 20000 nodes");
        let mut doubling = String::from("(RSG 0 1)\n((def $v abcdefgh)");
        for _ in 0..40 {
            doubling.push_str("(def $v (join $v $v))");
        }
        doubling.push(')');
        refused(&[("double.rsg", doubling)], "longer than 65536 bytes");
        let busy = format!("(RSG 0 1)\n({})", "(def $x (eval 1 + 2))".repeat(MAX_STEPS));
        refused(&[("busy.rsg", busy)], "steps to expand");
        // Few steps, each on a long value.
        let mut long = format!("(RSG 0 1)\n((def $v {})", "x".repeat(60_000));
        for _ in 0..1_000 {
            long.push_str("(def $w (join $v))");
        }
        long.push(')');
        refused(&[("long.rsg", long)], "add up to more than");
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_of_bounded_size_are_read_and_loops_end() {
        let d = std::env::temp_dir().join(format!("rcss3d-limits-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let read = |dir: &Path| {
            let dir = dir.to_path_buf();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(SceneLibrary::read_dir(&dir)));
            rx.recv_timeout(Duration::from_secs(10))
                .expect("read_dir returns")
        };
        // A directory symlink loop: each directory is walked once.
        std::fs::create_dir_all(d.join("loop/sub")).unwrap();
        std::fs::write(d.join("loop/sub/a.rsg"), "(RSG 0 1)\n()").unwrap();
        std::os::unix::fs::symlink(d.join("loop"), d.join("loop/sub/back")).unwrap();
        let files = read(&d.join("loop")).expect("a loop is walked once");
        assert_eq!(files.len(), 1, "{files:?}");
        // A file symlink loop, a FIFO, /dev/zero and a large file.
        let fifo = d.join("fifo/x.rsg");
        std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::fs::create_dir_all(d.join("flink")).unwrap();
        std::os::unix::fs::symlink(d.join("flink/b.rsg"), d.join("flink/a.rsg")).unwrap();
        std::os::unix::fs::symlink(d.join("flink/a.rsg"), d.join("flink/b.rsg")).unwrap();
        std::fs::create_dir_all(d.join("zero")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero/z.rsg")).unwrap();
        std::fs::create_dir_all(d.join("big")).unwrap();
        std::fs::write(d.join("big/big.rsg"), vec![b' '; 2 << 20]).unwrap();
        for (dir, want) in [
            ("fifo", "not a regular file"),
            ("flink", "symbolic links"),
            ("zero", "not a regular file"),
            ("big", "larger than the limit"),
        ] {
            let e = read(&d.join(dir)).expect_err(dir).to_string();
            assert!(e.contains(dir) && e.contains(want), "{dir}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
