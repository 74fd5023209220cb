//! The user's own settings files: the reference's `~/.simspark/spark.rb`
//! (the switches teams set there), rcss3d's per-user configuration file
//! and the file named by `RCSS3D_CONFIG`.

use std::path::{Path, PathBuf};

use super::overlay::Node;

/// The environment variable naming a configuration file.
pub const CONFIG_ENV: &str = "RCSS3D_CONFIG";

/// Where the user's files are, from the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserFiles {
    /// `$HOME`: `~/.simspark/spark.rb`, `~/.config/rcss3d/server.ron`.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (used instead of `~/.config` when absolute).
    pub xdg_config_home: Option<PathBuf>,
    /// `$RCSS3D_CONFIG`: a configuration file read after the per-user one.
    pub env_config: Option<PathBuf>,
}

impl UserFiles {
    /// The locations this process's environment names.
    pub fn from_env() -> UserFiles {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        UserFiles {
            home: var("HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            env_config: var(CONFIG_ENV),
        }
    }

    /// `~/.simspark/spark.rb`, the reference's per-user engine settings.
    pub fn spark_rb(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(|h| h.join(".simspark").join("spark.rb"))
    }

    /// rcss3d's per-user configuration file:
    /// `$XDG_CONFIG_HOME/rcss3d/server.ron`, or `~/.config/rcss3d/server.ron`
    /// when `XDG_CONFIG_HOME` is unset or not absolute (the XDG rule).
    pub fn user_config(&self) -> Option<PathBuf> {
        let base = match &self.xdg_config_home {
            Some(x) if x.is_absolute() => x.clone(),
            _ => self.home.as_ref()?.join(".config"),
        };
        Some(base.join("rcss3d").join("server.ron"))
    }
}

/// What a `spark.rb` sets, as configuration keys.
#[derive(Debug, Clone, PartialEq)]
pub struct SparkSettings {
    /// The keys set, for laying over the configuration.
    pub node: Node,
    /// `$name = value -> key = value` for every switch taken.
    pub taken: Vec<String>,
    /// Switches recognised but not usable (e.g. not a plain value), with
    /// the reason: worth a warning.
    pub refused: Vec<String>,
    /// Plain top-level assignments rcss3d has no setting for.
    pub unused: Vec<String>,
    /// Lines that are not simple top-level assignments (the rest of the
    /// Ruby script), counted.
    pub other_lines: usize,
}

/// Reads the switches of a `spark.rb` (simple top-level `$name = value`
/// assignments, several on a line when `;` separates them; anything else
/// is counted and skipped). Comments, `=begin`/`=end` blocks, heredocs and
/// everything after `__END__` are left out, as Ruby leaves them. A line
/// that sets a `$` variable in a way this reader does not follow (inside
/// a block, with an expression for a value) is listed in
/// [`SparkSettings::refused`] with its line number, so it is warned about.
/// `step` is the cycle length in seconds, to turn the reference's
/// intervals in seconds into cycles.
///
/// | spark.rb | rcss3d key |
/// |---|---|
/// | `$agentSyncMode = true/false` | `sync_mode` |
/// | `$monitorStep = 0.04` (seconds) | `monitor.monitor_step` (cycles, 2) |
/// | `$monitorLoggerStep = 0.2` (seconds) | `monitor.log_step` (cycles, 10) |
/// | `$agentPort = 3100` | `agent_port` |
/// | `$serverPort = 3200` | `monitor_port` |
pub fn read_spark_rb(text: &str, step: f32) -> SparkSettings {
    let mut out = SparkSettings {
        node: Node::empty(),
        taken: Vec::new(),
        refused: Vec::new(),
        unused: Vec::new(),
        other_lines: 0,
    };
    let mut depth = 0usize;
    for (n, code) in ruby_code_lines(text) {
        let mut counted = false;
        for code in statements(code) {
            let code = code.trim();
            if code.is_empty() {
                continue;
            }
            let first = code.split_whitespace().next().unwrap_or("");
            let closes = code == "end" || code.ends_with(" end") || code.ends_with(";end");
            let opens = matches!(
                first,
                "def"
                    | "class"
                    | "module"
                    | "if"
                    | "unless"
                    | "while"
                    | "until"
                    | "case"
                    | "begin"
                    | "for"
            ) || code.ends_with(" do")
                || code.contains(" do |");
            let plain = (depth == 0 && !opens && first != "end")
                .then(|| assignment(code))
                .flatten();
            let Some((name, value)) = plain else {
                if let Some(name) = sets_global(code) {
                    let why = if depth > 0 || opens {
                        "inside a block (if, def, ...), which rcss3d does not run"
                    } else {
                        "not a plain value"
                    };
                    out.refused.push(format!(
                        "line {n}: `{}` sets ${name}: skipped ({why})",
                        crate::untrusted::quote(code, 120)
                    ));
                }
                if first == "end" {
                    depth = depth.saturating_sub(1);
                } else if opens && !closes {
                    depth += 1;
                }
                if !counted {
                    out.other_lines += 1;
                    counted = true;
                }
                continue;
            };
            take_switch(&mut out, n, name, value, step);
        }
    }
    out
}

/// One plain top-level `$name = value` of line `n`.
fn take_switch(out: &mut SparkSettings, n: usize, name: &str, value: &str, step: f32) {
    let shown = format!("${name} = {value}");
    let seconds_to_cycles = |key: &str| -> Result<(String, String), String> {
        let secs: f64 = value
            .parse()
            .map_err(|_| "not a number of seconds".to_owned())?;
        if !(secs > 0.0 && secs.is_finite()) {
            return Err("must be > 0 seconds".into());
        }
        let cycles = (secs / f64::from(step)).round().max(1.0) as u64;
        Ok((key.to_owned(), cycles.to_string()))
    };
    let mapped: Option<Result<(String, String), String>> = match name {
        "agentSyncMode" => Some(match value {
            "true" | "false" => Ok(("sync_mode".into(), value.to_owned())),
            _ => Err("not true or false".into()),
        }),
        "monitorStep" => Some(seconds_to_cycles("monitor.monitor_step")),
        "monitorLoggerStep" => Some(seconds_to_cycles("monitor.log_step")),
        "agentPort" | "serverPort" => Some(
            value
                .parse::<u16>()
                .map(|p| {
                    let key = if name == "agentPort" {
                        "agent_port"
                    } else {
                        "monitor_port"
                    };
                    (key.to_owned(), p.to_string())
                })
                .map_err(|_| "not a port number".to_owned()),
        ),
        _ => None,
    };
    match mapped {
        Some(Ok((key, ron))) => {
            let path: Vec<&str> = key.split('.').collect();
            out.node.set(&path, ron.clone());
            out.taken.push(format!("{shown} -> {key} = {ron}"));
        }
        Some(Err(why)) => out.refused.push(format!(
            "line {n}: `{}` ({why})",
            crate::untrusted::quote(&shown, 120)
        )),
        None => out.unused.push(shown),
    }
}

/// The lines Ruby runs as code, numbered from 1 and without comments:
/// `=begin` ... `=end` blocks, heredoc bodies and everything from
/// `__END__` on are left out.
fn ruby_code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut in_doc = false;
    let mut heredocs: Vec<(String, bool)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if in_doc {
            in_doc = !line.starts_with("=end");
            continue;
        }
        if let Some((tag, indented)) = heredocs.first() {
            let end = if *indented { line.trim() } else { line };
            if end == tag {
                heredocs.remove(0);
            }
            continue;
        }
        if line.starts_with("=begin") {
            in_doc = true;
            continue;
        }
        if line.trim_end() == "__END__" {
            break;
        }
        let code = strip_comment(line);
        heredocs = heredoc_tags(code);
        out.push((i + 1, code));
    }
    out
}

/// The heredocs a line opens (`<<~TAG`, `<<-TAG`, `<<TAG`, the tag
/// optionally quoted), in order, each with whether its end may be
/// indented.
fn heredoc_tags(code: &str) -> Vec<(String, bool)> {
    let mut tags = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("<<") {
        let mut after = &rest[i + 2..];
        let indented = after.starts_with(['~', '-']);
        if indented {
            after = &after[1..];
        }
        let unquoted = after.trim_start_matches(['\'', '"', '`']);
        let len = unquoted
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(unquoted.len());
        let tag = &unquoted[..len];
        // `<<TAG` needs an upper-case or quoted tag; `a << b` is a shift.
        let quoted = unquoted.len() != after.len();
        if !tag.is_empty()
            && (indented || quoted || tag.starts_with(|c: char| c.is_ascii_uppercase()))
        {
            tags.push((tag.to_owned(), indented));
        }
        rest = &unquoted[len..];
    }
    tags
}

/// The statements of a line, split at `;` outside quotes.
fn statements(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quote = None;
    let mut start = 0;
    for (i, c) in code.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, ';') => {
                out.push(&code[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&code[start..]);
    out
}

/// The `$` variable a statement assigns to (`$x = ...`, `$x ||= ...`,
/// `$x += ...`), if any, outside quotes.
fn sets_global(code: &str) -> Option<&str> {
    let mut quote = None;
    for (i, c) in code.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '$') => {
                let rest = &code[i + 1..];
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                let after = rest[len..].trim_start();
                let op = after.trim_start_matches(['|', '&', '+', '-', '*', '/']);
                let assigns = op.starts_with('=') && !op.starts_with("==") && !op.starts_with("=~");
                if len > 0 && assigns {
                    return Some(&rest[..len]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The line without a `#` comment (a `#` inside quotes is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// `$name = value` (one optional `;` after the value) as (name, value).
fn assignment(code: &str) -> Option<(&str, &str)> {
    let rest = code.strip_prefix('$')?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, after) = rest.split_at(len);
    let value = after.trim_start().strip_prefix('=')?;
    if name.is_empty() || value.starts_with(['=', '~']) {
        return None;
    }
    let value = value.trim();
    let value = value.strip_suffix(';').unwrap_or(value).trim_end();
    // A heredoc (`<<~EOS`) is not a plain value.
    (!value.is_empty() && !value.contains(char::is_whitespace) && !value.starts_with("<<"))
        .then_some((name, value))
}

/// The path shown in logs: `~/...` below the home directory.
pub fn shown_path(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stock file's switch block, a changed sync mode and Ruby that is
    /// not an assignment.
    const SPARK_RB: &str = r#"
# (AgentControl) constants
$agentStep = 0.02
$agentType = 'tcp'
$agentPort = 3100
$agentSyncMode = true # changed
$threadedAgentControl = true

# define the monitor update interval in cycles
$monitorLoggerStep = 0.2;
$monitorStep = 0.02
$serverPort = 3300

if (!$defaultPhysicsBundle)
  $agentSyncMode = false
end

def sparkSetupServer
  $monitorStep = 1.0
end
$agentPort = ENV['PORT']
"#;

    #[test]
    fn spark_rb_switches_become_keys() {
        let s = read_spark_rb(SPARK_RB, 0.02);
        assert_eq!(
            s.node.leaves(),
            vec![
                ("agent_port".to_owned(), "3100".to_owned()),
                ("sync_mode".into(), "true".into()),
                ("monitor.log_step".into(), "10".into()),
                ("monitor.monitor_step".into(), "1".into()),
                ("monitor_port".into(), "3300".into()),
            ]
        );
        assert_eq!(s.taken[1], "$agentSyncMode = true -> sync_mode = true");
        assert_eq!(
            s.refused,
            vec![
                "line 15: `$agentSyncMode = false` sets $agentSyncMode: skipped (inside a \
                 block (if, def, ...), which rcss3d does not run)"
                    .to_owned(),
                "line 19: `$monitorStep = 1.0` sets $monitorStep: skipped (inside a block (if, \
                 def, ...), which rcss3d does not run)"
                    .to_owned(),
                "line 21: `$agentPort = ENV['PORT']` (not a port number)".to_owned(),
            ]
        );
        assert_eq!(
            s.unused,
            vec![
                "$agentStep = 0.02",
                "$agentType = 'tcp'",
                "$threadedAgentControl = true"
            ]
        );
        // `if`, its body and `end`; `def`, its body and `end`.
        assert_eq!(s.other_lines, 6);
    }

    #[test]
    fn every_dollar_line_not_followed_is_named_and_ruby_non_code_is_left_out() {
        let text = "$agentSyncMode = (1 == 1)\n\
                    $agentPort = 3166; $serverPort = 3266\n\
                    if true\n  $monitorStep = 0.04\nend\n\
                    $monitorLoggerStep = ENV['STEP'] || 0.4\n\
                    =begin\n$agentSyncMode = true\n=end\n\
                    $note = <<~EOS\n$agentSyncMode = true\n  EOS\n\
                    $x = 1 if $agentSyncMode == 2\n\
                    __END__\n$agentSyncMode = true\n";
        let s = read_spark_rb(text, 0.02);
        assert_eq!(
            s.node.leaves(),
            vec![
                ("agent_port".to_owned(), "3166".to_owned()),
                ("monitor_port".into(), "3266".into()),
            ]
        );
        let lines: Vec<&str> = s
            .refused
            .iter()
            .map(|r| r.split(':').next().unwrap_or(""))
            .collect();
        assert_eq!(lines, ["line 1", "line 4", "line 6", "line 10", "line 13"]);
        assert!(
            s.refused[0].contains("$agentSyncMode = (1 == 1)"),
            "{:?}",
            s.refused
        );
        assert!(
            s.refused[0].contains("not a plain value"),
            "{:?}",
            s.refused
        );
        assert!(s.refused[1].contains("inside a block"), "{:?}", s.refused);
    }

    #[test]
    fn user_file_locations_follow_xdg() {
        let mut u = UserFiles {
            home: Some("/home/a".into()),
            ..UserFiles::default()
        };
        assert_eq!(u.spark_rb(), Some("/home/a/.simspark/spark.rb".into()));
        assert_eq!(
            u.user_config(),
            Some("/home/a/.config/rcss3d/server.ron".into())
        );
        u.xdg_config_home = Some("relative".into());
        assert_eq!(
            u.user_config(),
            Some("/home/a/.config/rcss3d/server.ron".into())
        );
        u.xdg_config_home = Some("/xdg".into());
        assert_eq!(u.user_config(), Some("/xdg/rcss3d/server.ron".into()));
        assert_eq!(UserFiles::default().user_config(), None);
        assert_eq!(
            shown_path(
                Path::new("/home/a/.simspark/spark.rb"),
                Some(Path::new("/home/a"))
            ),
            "~/.simspark/spark.rb"
        );
    }
}
