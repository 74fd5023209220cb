//! The game-state perceptor `GS` (docs/protocol.md#gs): the agent's
//! number and side once after it joined, the score if configured, the game
//! time and the play mode.

use crate::perception::format::{push_int, push_real};
use crate::rules::Side;

/// What one `GS` predicate reports.
#[derive(Debug, Clone, Copy)]
pub struct GameState<'a> {
    /// `(unum n) (team side)`: sent once per connection, in the first
    /// frame after the agent joined its team.
    pub identity: Option<(u8, Side)>,
    /// `(sl n) (sr n)`, when the rules report the score.
    pub score: Option<(u32, u32)>,
    /// Game time (seconds).
    pub game_time: f32,
    /// Play-mode name as agents see it.
    pub play_mode: &'a str,
}

/// Appends `(GS ...)`.
pub fn write_game_state(out: &mut String, gs: &GameState<'_>) {
    out.push_str("(GS");
    if let Some((unum, side)) = gs.identity {
        out.push_str(" (unum ");
        push_int(out, i64::from(unum));
        out.push_str(") (team ");
        out.push_str(side.agent_name());
        out.push(')');
    }
    if let Some((sl, sr)) = gs.score {
        out.push_str(" (sl ");
        push_int(out, i64::from(sl));
        out.push_str(") (sr ");
        push_int(out, i64::from(sr));
        out.push(')');
    }
    out.push_str(" (t ");
    push_real(out, gs.game_time);
    out.push_str(") (pm ");
    out.push_str(gs.play_mode);
    out.push_str("))");
}

#[cfg(test)]
mod tests {
    use super::{write_game_state, GameState};
    use crate::rules::Side;

    #[test]
    fn identity_and_score_come_before_time_and_mode() {
        let mut s = String::new();
        write_game_state(
            &mut s,
            &GameState {
                identity: Some((7, Side::Left)),
                score: Some((1, 2)),
                game_time: 3.0,
                play_mode: "PlayOn",
            },
        );
        assert_eq!(
            s,
            "(GS (unum 7) (team left) (sl 1) (sr 2) (t 3.00) (pm PlayOn))"
        );
        s.clear();
        write_game_state(
            &mut s,
            &GameState {
                identity: None,
                score: None,
                game_time: 0.0,
                play_mode: "BeforeKickOff",
            },
        );
        assert_eq!(s, "(GS (t 0.00) (pm BeforeKickOff))");
    }
}
