//! Reading a match log back, plain or gzip, up to its last complete line.
//!
//! The one place that opens a log for `check-log` and the log player. Gzip
//! is recognised by its magic bytes, whatever the file is called, and may
//! hold any number of members; the reader counts them, since the server
//! writes one and RoboViz reads only the first. A log whose
//! writer was killed can end in the middle of a line or of a gzip member:
//! that tail is left out and reported ([`LogTail`]), everything before it
//! is read.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::bufread::GzDecoder;

/// A line longer than this is not a monitor message (an 11 v 11 full
/// state is about 100 kB): reading stops with an error instead of
/// buffering without end.
pub const MAX_LINE: usize = 4 << 20;

type Source = BufReader<Box<dyn Read + Send>>;

/// The members of a gzip file, decompressed one after the other.
struct GzMembers {
    /// The member being read; `None` once the input is exhausted.
    decoder: Option<GzDecoder<Source>>,
    /// Members started so far.
    members: u64,
}

impl Read for GzMembers {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = decoder.read(out)?;
            if n > 0 || out.is_empty() {
                return Ok(n);
            }
            // The member ended (its trailer was read): another follows
            // if any input is left.
            let mut rest = self.decoder.take().map(GzDecoder::into_inner);
            if let Some(source) = rest.as_mut() {
                if !source.fill_buf()?.is_empty() {
                    self.members += 1;
                    self.decoder = rest.map(GzDecoder::new);
                }
            }
        }
    }
}

enum Inner {
    Plain(Box<dyn Read + Send>),
    Gzip(Box<GzMembers>),
}

impl Read for Inner {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Inner::Plain(r) => r.read(out),
            Inner::Gzip(g) => g.read(out),
        }
    }
}

/// How a log file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTail {
    /// After a complete line, at the end of the file (and of a gzip
    /// member).
    Complete,
    /// In the middle of a line: the bytes after the last complete line,
    /// left out.
    PartialLine {
        /// Uncompressed bytes left out.
        bytes: usize,
    },
    /// In the middle of a gzip member (the writer stopped while writing
    /// it): what decompressed of it up to its last complete line was
    /// read.
    TruncatedGzip {
        /// Uncompressed bytes after the last complete line, left out.
        bytes: usize,
    },
}

impl LogTail {
    /// Whether the file ended cleanly.
    pub fn is_complete(&self) -> bool {
        *self == LogTail::Complete
    }
}

/// A match log opened for reading: a [`BufRead`] that yields its complete
/// lines only (each ending in `\n`), decompressed if it is gzip. Any other
/// read or decompression error (damaged data inside the file) is returned
/// as an error.
pub struct LogReader {
    inner: Inner,
    gzip: bool,
    buf: Vec<u8>,
    /// Start of the bytes not yet consumed.
    pos: usize,
    /// End of the complete lines in `buf`.
    ready: usize,
    tail: Option<LogTail>,
}

impl LogReader {
    /// Opens the log at `path`.
    pub fn open(path: &Path) -> io::Result<LogReader> {
        LogReader::new(File::open(path)?)
    }

    /// Reads a log from any byte source (a file, a slice in tests).
    pub fn new(mut source: impl Read + Send + 'static) -> io::Result<LogReader> {
        let mut magic = Vec::with_capacity(2);
        (&mut source).take(2).read_to_end(&mut magic)?;
        let gzip = magic == [0x1f, 0x8b];
        let whole: Box<dyn Read + Send> = Box::new(Cursor::new(magic).chain(source));
        let inner = if gzip {
            Inner::Gzip(Box::new(GzMembers {
                decoder: Some(GzDecoder::new(BufReader::with_capacity(64 * 1024, whole))),
                members: 1,
            }))
        } else {
            Inner::Plain(whole)
        };
        Ok(LogReader {
            inner,
            gzip,
            buf: Vec::with_capacity(64 * 1024),
            pos: 0,
            ready: 0,
            tail: None,
        })
    }

    /// Whether the file is gzip.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Gzip members begun so far (0 for a plain log). More than one is a
    /// file RoboViz replays only the first member of.
    pub fn gzip_members(&self) -> u64 {
        match &self.inner {
            Inner::Plain(_) => 0,
            Inner::Gzip(g) => g.members,
        }
    }

    /// How the file ended; `None` until the reader has reached its end.
    pub fn tail(&self) -> Option<LogTail> {
        self.tail
    }

    /// The rest of the log (its complete lines) as text.
    pub fn read_text(&mut self) -> io::Result<String> {
        let mut text = String::new();
        self.read_to_string(&mut text)?;
        Ok(text)
    }

    /// Reads more until `buf` holds a complete line past `pos`, or the end.
    fn fill(&mut self) -> io::Result<()> {
        self.buf.drain(..self.pos);
        self.pos = 0;
        self.ready = 0;
        let mut chunk = [0u8; 64 * 1024];
        while self.tail.is_none() {
            let n = match self.inner.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // The decoder ran out of input inside a member.
                Err(e) if self.gzip && e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.tail = Some(LogTail::TruncatedGzip {
                        bytes: self.buf.len(),
                    });
                    break;
                }
                Err(e) => return Err(e),
            };
            if n == 0 {
                self.tail = Some(if self.buf.is_empty() {
                    LogTail::Complete
                } else {
                    LogTail::PartialLine {
                        bytes: self.buf.len(),
                    }
                });
                break;
            }
            let old = self.buf.len();
            self.buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = self.buf[old..].iter().rposition(|b| *b == b'\n') {
                self.ready = old + i + 1;
                return Ok(());
            }
            if self.buf.len() > MAX_LINE {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a line longer than {MAX_LINE} bytes"),
                ));
            }
        }
        // The end: what follows the last complete line is left out.
        self.buf.clear();
        Ok(())
    }
}

impl Read for LogReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for LogReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.ready && self.tail.is_none() {
            self.fill()?;
        }
        Ok(&self.buf[self.pos..self.ready])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.ready);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, Write};

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::{LogReader, LogTail};

    fn member(text: &str) -> Vec<u8> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    fn lines(bytes: Vec<u8>) -> (Vec<String>, Option<LogTail>, bool) {
        let mut r = LogReader::new(std::io::Cursor::new(bytes)).unwrap();
        let lines = (&mut r).lines().map(|l| l.unwrap()).collect();
        (lines, r.tail(), r.is_gzip())
    }

    #[test]
    fn plain_text_up_to_the_last_complete_line() {
        let (l, tail, gz) = lines(b"a\nb\n".to_vec());
        assert_eq!(
            (l, tail, gz),
            (vec!["a".into(), "b".into()], Some(LogTail::Complete), false)
        );
        let (l, tail, _) = lines(b"a\nb\nhalf a li".to_vec());
        assert_eq!(l, ["a", "b"]);
        assert_eq!(tail, Some(LogTail::PartialLine { bytes: 9 }));
        let (l, tail, _) = lines(Vec::new());
        assert!(l.is_empty());
        assert_eq!(tail, Some(LogTail::Complete));
    }

    #[test]
    fn gzip_members_are_read_one_after_the_other() {
        let mut bytes = member("a\nb\n");
        bytes.extend(member("c\n"));
        bytes.extend(member("d\ne\n"));
        let mut r = LogReader::new(std::io::Cursor::new(bytes)).unwrap();
        let l: Vec<String> = (&mut r).lines().map(|l| l.unwrap()).collect();
        assert!(r.is_gzip());
        assert_eq!(l, ["a", "b", "c", "d", "e"]);
        assert_eq!(r.tail(), Some(LogTail::Complete));
        assert_eq!(r.gzip_members(), 3);
        let mut one = LogReader::new(std::io::Cursor::new(member("a\n"))).unwrap();
        assert_eq!(one.read_text().unwrap(), "a\n");
        assert_eq!(one.gzip_members(), 1);
    }

    #[test]
    fn a_member_cut_short_ends_the_log_at_its_last_complete_line() {
        let mut bytes = member("a\nb\n");
        let second = member(&"line of the second member\n".repeat(50));
        let whole = bytes.len() + second.len();
        bytes.extend(second);
        // Every cut inside the second member: the first member's lines,
        // then whatever of the second decompressed to complete lines.
        for cut in (whole - 40..whole).chain([whole - 8, whole - 1]) {
            let (l, tail, _) = lines(bytes[..cut].to_vec());
            assert!(l.len() >= 2, "cut at {cut}: {l:?}");
            assert_eq!(l[..2], ["a", "b"]);
            assert!(l[2..].iter().all(|s| s == "line of the second member"));
            assert!(
                matches!(tail, Some(LogTail::TruncatedGzip { .. })),
                "cut at {cut}: {tail:?}"
            );
        }
    }

    #[test]
    fn damaged_gzip_data_is_an_error() {
        let mut bytes = member(&"abc\n".repeat(1000));
        let mid = bytes.len() / 2;
        for b in &mut bytes[mid..mid + 8] {
            *b ^= 0x5a;
        }
        let mut r = LogReader::new(std::io::Cursor::new(bytes)).unwrap();
        let result: Result<Vec<String>, _> = (&mut r).lines().collect();
        assert!(result.is_err());
    }
}
