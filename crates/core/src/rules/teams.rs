//! Team admission at `init` (docs/protocol.md#init, docs/protocol.md#admission-and-team-composition):
//! side assignment by first appearance, uniform numbers, the robot-type
//! composition rules, the sideline placement queue, and the admission
//! settings ([`TeamsConfig`]: team-name length, freeing an empty side).

use std::sync::Arc;

use serde::Deserialize;
use thiserror::Error;

use super::Side;

/// Players per team.
pub const TEAM_SIZE: usize = 11;

/// Number of heterogeneous robot types (0-4).
pub const ROBOT_TYPES: usize = 5;

/// The composition limits (`naosoccersim.rb` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositionRules {
    /// `MaxRobotTypeCount`: at most this many robots of one type (7).
    pub max_robot_type_count: usize,
    /// `MinRobotTypesCount`: a full team uses at least this many types (3).
    pub min_robot_types_count: usize,
    /// `MaxSumTwoRobotTypes`: at most this many robots in any two types (9).
    pub max_sum_two_robot_types: usize,
}

impl Default for CompositionRules {
    fn default() -> Self {
        CompositionRules {
            max_robot_type_count: 7,
            min_robot_types_count: 3,
            max_sum_two_robot_types: 9,
        }
    }
}

/// Team admission (`teams:` in `conf/server.ron`). Every field documents
/// its default; a missing field takes it, an unknown field is an error.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TeamsConfig {
    /// Longest accepted team name, bytes; an `init` with a longer name
    /// fails (logged) and the robot gets no team. Default **20**: every
    /// team name is echoed in other agents' vision and hear messages, and
    /// with names up to 20 characters every agent frame stays within the
    /// 8192-byte buffer of FCPCodebase (docs/protocol.md#message-sizes). The
    /// reference has no limit.
    pub max_name_bytes: usize,
    /// While the play mode is BeforeKickOff, a new team name may take a
    /// side whose team has no robots left (the name that held it is
    /// forgotten, its sideline queue restarts). Default **false**: as in
    /// the reference, a name keeps its side until the server restarts, so
    /// a mistyped name that joined once blocks that side.
    pub free_empty_side_before_kick_off: bool,
}

impl Default for TeamsConfig {
    fn default() -> Self {
        TeamsConfig {
            max_name_bytes: 20,
            free_empty_side_before_kick_off: false,
        }
    }
}

/// Why an `init` failed. The agent is not told; its robot is dropped from
/// 10 m above the centre spot.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum JoinError {
    /// Empty or missing team name (the reference accepts it; we do not).
    #[error("empty or missing team name")]
    NoTeamName,
    /// Team name with characters that would break clients or monitors.
    #[error("team name `{0}` has characters outside 0x21-0x7E or parentheses/quotes")]
    BadTeamName(String),
    /// Team name longer than [`TeamsConfig::max_name_bytes`].
    #[error("team name `{shown}` is {len} bytes long; at most {limit} are accepted")]
    TeamNameTooLong {
        /// The name's start, escaped.
        shown: String,
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Both sides are taken by other names.
    #[error("a third team `{0}` cannot join (left and right are taken)")]
    ThirdTeam(String),
    /// Uniform number outside 0..=11.
    #[error("uniform number {0} is outside 0..11")]
    UnumOutOfRange(i64),
    /// Uniform number already used in that team.
    #[error("uniform number {0} is already taken in team {1}")]
    UnumTaken(u8, String),
    /// The team has 11 players.
    #[error("team {0} is full")]
    TeamFull(String),
    /// A robot-type composition rule is violated.
    #[error("robot type {robot_type} violates the team composition rules of team {team}: {rule}")]
    Composition {
        /// The requested type.
        robot_type: u8,
        /// Team name.
        team: String,
        /// Which rule.
        rule: &'static str,
    },
}

#[derive(Debug, Default, Clone)]
struct Team {
    name: Option<Arc<str>>,
    /// Robot type of the player wearing number i+1, if any.
    players: [Option<u8>; TEAM_SIZE],
    /// Sideline queue: placements done so far.
    placements: u32,
}

/// Both teams' names, players and placement queues. Names stay bound to
/// their side for the life of the server unless
/// [`TeamsConfig::free_empty_side_before_kick_off`] is set.
#[derive(Debug, Clone, Default)]
pub struct TeamRegistry {
    teams: [Team; 2],
    rules: CompositionRules,
    admission: TeamsConfig,
}

fn idx(side: Side) -> usize {
    match side {
        Side::Left => 0,
        Side::Right => 1,
    }
}

impl TeamRegistry {
    /// An empty registry with these composition rules and admission
    /// settings.
    pub fn new(rules: CompositionRules, admission: TeamsConfig) -> TeamRegistry {
        TeamRegistry {
            teams: Default::default(),
            rules,
            admission,
        }
    }

    /// The name bound to a side, if any.
    pub fn name(&self, side: Side) -> Option<&Arc<str>> {
        self.teams[idx(side)].name.as_ref()
    }

    /// Number of players currently in the team on `side`.
    pub fn player_count(&self, side: Side) -> usize {
        self.teams[idx(side)].players.iter().flatten().count()
    }

    /// Admits a player: binds the team name to a side (first name left,
    /// second right), picks or checks the uniform number, checks the
    /// composition rules. On failure nothing is reserved. `before_kick_off`
    /// says whether the play mode is BeforeKickOff (a side without robots
    /// may then change hands, when the settings allow).
    pub fn join(
        &mut self,
        team_name: Option<&str>,
        unum: i64,
        robot_type: u8,
        before_kick_off: bool,
    ) -> Result<(Side, u8, Arc<str>), JoinError> {
        let name = match team_name {
            None | Some("") => return Err(JoinError::NoTeamName),
            Some(n) => n,
        };
        let limit = self.admission.max_name_bytes;
        if name.len() > limit {
            return Err(JoinError::TeamNameTooLong {
                shown: crate::untrusted::quote(name, 32),
                len: name.len(),
                limit,
            });
        }
        if name
            .bytes()
            .any(|b| !(0x21..=0x7e).contains(&b) || matches!(b, b'(' | b')' | b'"' | b'\''))
        {
            return Err(JoinError::BadTeamName(crate::untrusted::quote(name, 64)));
        }
        let side = match self
            .teams
            .iter()
            .position(|t| t.name.as_deref() == Some(name))
        {
            Some(0) => Side::Left,
            Some(_) => Side::Right,
            None => match self.free_side(before_kick_off) {
                Some(side) => side,
                None => return Err(JoinError::ThirdTeam(name.to_owned())),
            },
        };
        if !(0..=TEAM_SIZE as i64).contains(&unum) {
            return Err(JoinError::UnumOutOfRange(unum));
        }
        let team = &self.teams[idx(side)];
        let unum = if unum == 0 {
            match team.players.iter().position(|p| p.is_none()) {
                Some(i) => i as u8 + 1,
                None => return Err(JoinError::TeamFull(name.to_owned())),
            }
        } else {
            if team.players[unum as usize - 1].is_some() {
                return Err(JoinError::UnumTaken(unum as u8, name.to_owned()));
            }
            unum as u8
        };
        self.check_composition(team, name, robot_type)?;
        let team = &mut self.teams[idx(side)];
        let arc: Arc<str> = match &team.name {
            Some(n) if &**n == name => n.clone(),
            _ => {
                // A new name for the side: a never-used side, or an empty
                // one taken over before kick-off with a fresh queue.
                let n: Arc<str> = Arc::from(name);
                team.name = Some(n.clone());
                team.placements = 0;
                n
            }
        };
        team.players[unum as usize - 1] = Some(robot_type);
        Ok((side, unum, arc))
    }

    /// The side a new team name gets: the first one no name holds, else
    /// (when allowed and before kick-off) the first one without robots.
    fn free_side(&self, before_kick_off: bool) -> Option<Side> {
        let side = |i: usize| if i == 0 { Side::Left } else { Side::Right };
        if let Some(i) = self.teams.iter().position(|t| t.name.is_none()) {
            return Some(side(i));
        }
        if self.admission.free_empty_side_before_kick_off && before_kick_off {
            return self
                .teams
                .iter()
                .position(|t| t.players.iter().all(Option::is_none))
                .map(side);
        }
        None
    }

    fn check_composition(&self, team: &Team, name: &str, t: u8) -> Result<(), JoinError> {
        let mut cnt = [0usize; ROBOT_TYPES];
        for ty in team.players.iter().flatten() {
            if let Some(c) = cnt.get_mut(*ty as usize) {
                *c += 1;
            }
        }
        let fail = |rule| {
            Err(JoinError::Composition {
                robot_type: t,
                team: name.to_owned(),
                rule,
            })
        };
        let ti = t as usize;
        if ti >= ROBOT_TYPES {
            return fail("unknown robot type");
        }
        let n: usize = cnt.iter().sum();
        let used = cnt.iter().filter(|c| **c > 0).count();
        if cnt[ti] >= self.rules.max_robot_type_count {
            return fail("MaxRobotTypeCount");
        }
        let max_other = (0..ROBOT_TYPES)
            .filter(|k| *k != ti)
            .map(|k| cnt[k])
            .max()
            .unwrap_or(0);
        if cnt[ti] + 1 + max_other > self.rules.max_sum_two_robot_types {
            return fail("MaxSumTwoRobotTypes");
        }
        let missing = self.rules.min_robot_types_count.saturating_sub(used);
        if TEAM_SIZE - n <= missing && cnt[ti] > 0 {
            return fail("MinRobotTypesCount");
        }
        Ok(())
    }

    /// Exchanges the two sides (second half with `ChangeSidesInSecondHalf`).
    pub fn swap_sides(&mut self) {
        self.teams.swap(0, 1);
    }

    /// Frees a player's number (disconnect or kill).
    pub fn leave(&mut self, side: Side, unum: u8) {
        if let Some(slot) = self.teams[idx(side)]
            .players
            .get_mut((unum as usize).wrapping_sub(1))
        {
            *slot = None;
        }
    }

    /// The next sideline slot for a player who just sent `init`: torso
    /// position (x, y) in the field frame and heading (0 = +x). The queue
    /// never resets.
    pub fn next_sideline_slot(
        &mut self,
        side: Side,
        field_length: f32,
        field_width: f32,
        agent_radius: f32,
    ) -> (f32, f32, f32) {
        let team = &mut self.teams[idx(side)];
        let k = team.placements;
        team.placements += 1;
        let y0 = field_width / 2.0 - 2.0 * agent_radius;
        let dy = 3.0 * agent_radius;
        let per_column = ((field_width / dy).floor() as u32).max(1);
        let column = k / per_column;
        let row = k % per_column;
        let x_abs = field_length / 2.0 - 2.0 * agent_radius;
        let x_left = -x_abs + 2.0 * agent_radius * column as f32;
        let y = y0 - dy * row as f32;
        match side {
            Side::Left => (x_left, y, 0.0),
            Side::Right => (-x_left, y, 180.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_numbers_and_third_team() {
        let mut r = TeamRegistry::default();
        assert_eq!(
            r.join(Some("A"), 0, 0, false).map(|x| (x.0, x.1)),
            Ok((Side::Left, 1))
        );
        assert_eq!(
            r.join(Some("B"), 5, 0, false).map(|x| (x.0, x.1)),
            Ok((Side::Right, 5))
        );
        assert_eq!(
            r.join(Some("A"), 0, 1, false).map(|x| (x.0, x.1)),
            Ok((Side::Left, 2))
        );
        assert!(matches!(
            r.join(Some("C"), 0, 0, false),
            Err(JoinError::ThirdTeam(_))
        ));
        assert!(matches!(
            r.join(Some("A"), 1, 2, false),
            Err(JoinError::UnumTaken(1, _))
        ));
        assert!(matches!(
            r.join(Some("A"), 12, 2, false),
            Err(JoinError::UnumOutOfRange(12))
        ));
        assert!(matches!(
            r.join(Some("A"), -1, 2, false),
            Err(JoinError::UnumOutOfRange(-1))
        ));
        assert!(matches!(
            r.join(None, 3, 2, false),
            Err(JoinError::NoTeamName)
        ));
        assert!(matches!(
            r.join(Some("a b"), 3, 2, false),
            Err(JoinError::BadTeamName(_))
        ));
        r.leave(Side::Left, 1);
        assert_eq!(r.join(Some("A"), 0, 3, false).map(|x| x.1), Ok(1));
        // Names stay bound even when a team is empty.
        r.leave(Side::Right, 5);
        assert_eq!(r.join(Some("B"), 0, 0, false).map(|x| x.0), Ok(Side::Right));
    }

    #[test]
    fn team_names_longer_than_the_limit_fail() {
        let mut r = TeamRegistry::default();
        let long = "N".repeat(21);
        assert!(matches!(
            r.join(Some(&long), 1, 0, true),
            Err(JoinError::TeamNameTooLong {
                len: 21,
                limit: 20,
                ..
            })
        ));
        // Nothing was bound: the next name still gets the left side.
        let at_limit = "N".repeat(20);
        assert_eq!(
            r.join(Some(&at_limit), 1, 0, true).map(|x| x.0),
            Ok(Side::Left)
        );
        let huge = "x".repeat(16 * 1024);
        let err = r.join(Some(&huge), 1, 0, true).unwrap_err();
        assert!(err.to_string().len() < 200, "{err}");
    }

    #[test]
    fn an_empty_side_changes_hands_only_when_allowed_and_before_kick_off() {
        let admission = |free| TeamsConfig {
            free_empty_side_before_kick_off: free,
            ..TeamsConfig::default()
        };
        let mut kept = TeamRegistry::new(CompositionRules::default(), admission(false));
        kept.join(Some("Typo"), 1, 0, true).unwrap();
        kept.join(Some("B"), 1, 0, true).unwrap();
        kept.leave(Side::Left, 1);
        assert!(matches!(
            kept.join(Some("A"), 1, 0, true),
            Err(JoinError::ThirdTeam(_))
        ));

        let mut freed = TeamRegistry::new(CompositionRules::default(), admission(true));
        freed.join(Some("Typo"), 1, 0, true).unwrap();
        freed.join(Some("B"), 1, 0, true).unwrap();
        freed.next_sideline_slot(Side::Left, 30.0, 20.0, 0.4);
        // A side with robots is never taken, nor an empty one after kick-off.
        assert!(freed.join(Some("A"), 1, 0, true).is_err());
        freed.leave(Side::Left, 1);
        assert!(freed.join(Some("A"), 1, 0, false).is_err());
        let (side, unum, name) = freed.join(Some("A"), 1, 0, true).unwrap();
        assert_eq!((side, unum, &*name), (Side::Left, 1, "A"));
        assert_eq!(freed.name(Side::Left).map(|n| &**n), Some("A"));
        // The new team's queue starts at the first slot.
        assert_eq!(
            freed.next_sideline_slot(Side::Left, 30.0, 20.0, 0.4),
            (-14.2, 9.2, 0.0)
        );
        // The old name is a third team now.
        assert!(matches!(
            freed.join(Some("Typo"), 2, 0, true),
            Err(JoinError::ThirdTeam(_))
        ));
    }

    #[test]
    fn only_type_zero_gives_seven_players() {
        let mut r = TeamRegistry::default();
        for i in 1..=7 {
            assert!(r.join(Some("A"), i, 0, false).is_ok(), "player {i}");
        }
        assert!(matches!(
            r.join(Some("A"), 8, 0, false),
            Err(JoinError::Composition { .. })
        ));
        // A failed join reserves nothing: number 8 is still free.
        assert_eq!(r.join(Some("A"), 8, 1, false).map(|x| x.1), Ok(8));
    }

    #[test]
    fn fcp_type_list_is_legal() {
        let mut r = TeamRegistry::default();
        for (i, t) in [0u8, 1, 1, 1, 2, 3, 3, 3, 4, 4, 4].iter().enumerate() {
            assert!(
                r.join(Some("FCP"), i as i64 + 1, *t, false).is_ok(),
                "player {}",
                i + 1
            );
        }
        assert_eq!(r.player_count(Side::Left), 11);
    }

    #[test]
    fn min_types_rule() {
        let mut r = TeamRegistry::default();
        // 7 of type 0, 2 of type 1: 2 slots left, 1 type missing.
        for i in 1..=7 {
            r.join(Some("A"), i, 0, false).unwrap();
        }
        r.join(Some("A"), 8, 1, false).unwrap();
        // MaxSumTwo: 7 + 2 = 9 allowed.
        r.join(Some("A"), 9, 1, false).unwrap();
        assert!(matches!(
            r.join(Some("A"), 10, 1, false),
            Err(JoinError::Composition { .. })
        ));
        assert!(r.join(Some("A"), 10, 2, false).is_ok());
    }

    #[test]
    fn sideline_queue() {
        let mut r = TeamRegistry::default();
        assert_eq!(
            r.next_sideline_slot(Side::Left, 30.0, 20.0, 0.4),
            (-14.2, 9.2, 0.0)
        );
        let (x, y, _) = r.next_sideline_slot(Side::Left, 30.0, 20.0, 0.4);
        assert!((x + 14.2).abs() < 1e-5 && (y - 8.0).abs() < 1e-5);
        assert_eq!(
            r.next_sideline_slot(Side::Right, 30.0, 20.0, 0.4),
            (14.2, 9.2, 180.0)
        );
    }
}
