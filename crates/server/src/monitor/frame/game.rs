//! Game-state and environment predicates of a full state or a delta
//! (time, play mode, teams, score, field parameters).

use super::ConsumerState;
use crate::monitor::config::FieldParams;
use crate::monitor::number::push_g;
use crate::rules::PlayMode;
use crate::sim::snapshot::WorldSnapshot;

/// The 15 numeric environment predicates, `play_modes` and the optional
/// goalie-area values (docs/protocol.md#environment-predicates).
pub(super) fn env_predicates(f: &FieldParams, out: &mut String) {
    let items: [(&str, f32); 15] = [
        ("FieldLength", f.field_length),
        ("FieldWidth", f.field_width),
        ("FieldHeight", f.field_height),
        ("GoalWidth", f.goal_width),
        ("GoalDepth", f.goal_depth),
        ("GoalHeight", f.goal_height),
        ("BorderSize", f.border_size),
        ("FreeKickDistance", f.free_kick_distance),
        ("WaitBeforeKickOff", f.wait_before_kick_off),
        ("AgentRadius", f.agent_radius),
        ("BallRadius", f.ball_radius),
        ("BallMass", f.ball_mass),
        ("RuleGoalPauseTime", f.rule_goal_pause_time),
        ("RuleKickInPauseTime", f.rule_kick_in_pause_time),
        ("RuleHalfTime", f.rule_half_time),
    ];
    for (name, value) in items {
        pred_real(out, name, value);
    }
    out.push_str("(play_modes");
    for mode in PlayMode::ALL {
        out.push(' ');
        out.push_str(mode.name());
    }
    out.push(')');
    if let Some(v) = f.goalie_area_length {
        pred_real(out, "GoalieAreaLength", v);
    }
    if let Some(v) = f.goalie_area_width {
        pred_real(out, "GoalieAreaWidth", v);
    }
}

pub(super) fn pred_real(out: &mut String, name: &str, value: f32) -> bool {
    out.push('(');
    out.push_str(name);
    out.push(' ');
    let ok = push_g(out, value);
    out.push(')');
    ok
}

pub(super) fn pred_int(out: &mut String, name: &str, value: u64) {
    use std::fmt::Write;
    let _ = write!(out, "({name} {value})");
}

/// Game-state predicates (docs/protocol.md#game-state-predicates):
/// everything in a full state, changes only in a delta; fouls created since
/// this consumer's last message in both.
pub(super) fn write_game(
    state: &mut ConsumerState,
    snap: &WorldSnapshot,
    full: bool,
    out: &mut String,
) -> bool {
    let g = &snap.game;
    let finite = pred_real(out, "time", g.game_time);
    let sent = &mut state.game;
    // An empty name counts as not yet known: a team name is sent once known.
    if let Some(name) = g.team_left.as_ref().filter(|n| !n.is_empty()) {
        if full || sent.team_left.as_deref() != Some(&**name) {
            push_team(out, "team_left", name);
            sent.team_left = Some(name.clone());
        }
    }
    if let Some(name) = g.team_right.as_ref().filter(|n| !n.is_empty()) {
        if full || sent.team_right.as_deref() != Some(&**name) {
            push_team(out, "team_right", name);
            sent.team_right = Some(name.clone());
        }
    }
    if full || sent.half != g.half {
        pred_int(out, "half", u64::from(g.half));
        sent.half = g.half;
    }
    if full || sent.score_left != g.score_left {
        pred_int(out, "score_left", u64::from(g.score_left));
        sent.score_left = g.score_left;
    }
    if full || sent.score_right != g.score_right {
        pred_int(out, "score_right", u64::from(g.score_right));
        sent.score_right = g.score_right;
    }
    if full || sent.play_mode != Some(g.play_mode) {
        pred_int(out, "play_mode", u64::from(g.play_mode.index()));
        sent.play_mode = Some(g.play_mode);
    }
    // A consumer's foul cursor starts at the fouls that existed when it
    // connected: history is not replayed as fresh fouls.
    if !state.fouls_started {
        state.fouls_started = true;
        state.fouls_sent = g.fouls.len();
    }
    if g.fouls.len() < state.fouls_sent {
        // The record list was reset (new match): start over.
        state.fouls_sent = 0;
    }
    for (i, foul) in g.fouls.iter().enumerate().skip(state.fouls_sent) {
        if foul.kind >= 11 {
            tracing::warn!(kind = foul.kind, "foul type >= 11 not sent to monitors");
            continue;
        }
        use std::fmt::Write;
        let _ = write!(
            out,
            "(foul {} {} {} {})",
            i + 1,
            foul.kind,
            foul.side.monitor_index(),
            foul.unum
        );
    }
    state.fouls_sent = g.fouls.len();
    finite
}

/// Team names are tokens: whitespace, parentheses and non-ASCII would
/// break RoboViz's reader, so they become `_`.
pub(super) fn push_team(out: &mut String, pred: &str, name: &str) {
    out.push('(');
    out.push_str(pred);
    out.push(' ');
    for c in name.chars() {
        if c.is_ascii_graphic() && c != '(' && c != ')' {
            out.push(c);
        } else {
            out.push('_');
        }
    }
    out.push(')');
}
