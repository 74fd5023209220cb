//! Reading an input file the server trusts no more than a socket (robot
//! models, the field scene, configuration files): only a regular file is
//! read, and only up to a size cap, so a FIFO, a device such as
//! `/dev/zero`, a directory or a symlink loop in its place is refused with
//! an error naming it, instead of blocking the server or filling its
//! memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Reads the regular file at `path` (symlinks followed) as UTF-8 text of
/// at most `max_bytes`. Anything else (a FIFO, a device, a directory, a
/// loop of symlinks, a larger file) is an error saying what it is.
pub fn read_regular(path: &Path, max_bytes: u64) -> io::Result<String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading blocks until a writer comes; without
    // blocking it opens at once and is refused below as not a regular
    // file.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file: File = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    if meta.len() > max_bytes {
        return Err(too_large(&format!("{} bytes", meta.len()), max_bytes));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow while it is read: never more than the cap.
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large("grew while read", max_bytes));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn too_large(what: &str, max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}, larger than the limit of {max} bytes"),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::read_regular;

    fn scratch(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rcss3d-input-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_regular_files_up_to_the_cap_are_read() {
        let d = scratch("regular");
        let ok = d.join("ok.txt");
        std::fs::write(&ok, "hello").unwrap();
        assert_eq!(read_regular(&ok, 5).unwrap(), "hello");
        let e = read_regular(&ok, 4).unwrap_err();
        assert!(e.to_string().contains("larger than the limit of 4"), "{e}");
        let e = read_regular(std::path::Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_regular(&d, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let (a, b) = (d.join("a"), d.join("b"));
        std::os::unix::fs::symlink(&b, &a).unwrap();
        std::os::unix::fs::symlink(&a, &b).unwrap();
        assert!(read_regular(&a, 1 << 20).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }
}
