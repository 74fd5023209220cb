//! The referee's configuration: every parameter of docs/protocol.md#referee-parameters under the
//! reference's own names (the RON keys of the `rules:` section of
//! `conf/server.ron`), with the defaults that upstream `naosoccersim.rb` sets.
//!
//! Durations are in seconds. The referee converts them into cycle counts with
//! the step length it is given, so a different step length keeps the same
//! durations in seconds.

use serde::Deserialize;

/// Every rule parameter and option. Missing keys take their default, unknown
/// keys are an error (`deny_unknown_fields`).
///
/// ```
/// let cfg: rcss3d_core::rules::RulesConfig = ron::from_str("(RuleHalfTime: 120)").unwrap();
/// assert_eq!(cfg.half_time, 120.0);
/// assert_eq!(cfg.goal_pause_time, 3.0);
/// ```
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RulesConfig {
    // ---- options that are not in naosoccersim.rb ----
    /// `RefereeEnabled` (default true). When false the referee only runs the
    /// clock; play modes change only through monitor commands.
    #[serde(rename = "RefereeEnabled")]
    pub referee_enabled: bool,
    /// `SelfCollisionFoul` (default false). The self-collision foul of later
    /// upstream servers (foul type 7): a robot reported in
    /// `WorldFacts::self_collisions` is fouled. Not part of 0.7.1.
    #[serde(rename = "SelfCollisionFoul")]
    pub self_collision_foul: bool,

    // ---- geometry (the physics field is built from these too:
    // `Config::field_size`) ----
    /// `FieldLength` (default 30 m): goal line to goal line.
    #[serde(rename = "FieldLength")]
    pub field_length: f32,
    /// `FieldWidth` (default 20 m): sideline to sideline.
    #[serde(rename = "FieldWidth")]
    pub field_width: f32,
    /// `FieldHeight` (default 40 m): height of the field box (not used by the rules).
    #[serde(rename = "FieldHeight")]
    pub field_height: f32,
    /// `GoalWidth` (default 2.1 m): distance between the posts.
    #[serde(rename = "GoalWidth")]
    pub goal_width: f32,
    /// `GoalDepth` (default 0.6 m).
    #[serde(rename = "GoalDepth")]
    pub goal_depth: f32,
    /// `GoalHeight` (default 0.8 m): height of the bar.
    #[serde(rename = "GoalHeight")]
    pub goal_height: f32,
    /// `PenaltyLength` (default 1.8 m): depth of the penalty area.
    #[serde(rename = "PenaltyLength")]
    pub penalty_length: f32,
    /// `PenaltyWidth` (default 3.9 m): the penalty area is `PenaltyWidth +
    /// GoalWidth` wide (6.0 m by default).
    #[serde(rename = "PenaltyWidth")]
    pub penalty_width: f32,
    /// `BorderSize` (default 0 m): reported to monitors only.
    #[serde(rename = "BorderSize")]
    pub border_size: f32,
    /// `AgentRadius` (default 0.4 m): placement spacing, safe-spot radius,
    /// beam height.
    #[serde(rename = "AgentRadius")]
    pub agent_radius: f32,
    /// `BallRadius` (default 0.042 m).
    #[serde(rename = "BallRadius")]
    pub ball_radius: f32,
    /// `BallMass` (default 0.026 kg): physics only.
    #[serde(rename = "BallMass")]
    pub ball_mass: f32,

    // ---- set pieces ----
    /// `FreeKickDistance` (default 2.0 m): opponents' clearance radius at set
    /// pieces, radius of the centre circle.
    #[serde(rename = "FreeKickDistance")]
    pub free_kick_distance: f32,
    /// `FreeKickMoveDist` (default 2.2 m): minimum push distance of clearances.
    #[serde(rename = "FreeKickMoveDist")]
    pub free_kick_move_dist: f32,
    /// `KickRepelDist` (default 0.5 m): kick takers are pushed this far from the spot.
    #[serde(rename = "KickRepelDist")]
    pub kick_repel_dist: f32,
    /// `GoalKickDist` (default 1.0 m): distance of the goal-kick spot from the goal line.
    #[serde(rename = "GoalKickDist")]
    pub goal_kick_dist: f32,

    // ---- match flow ----
    /// `AutomaticKickOff` (default false): kick off automatically after
    /// `WaitBeforeKickOff` seconds of BeforeKickOff with agents connected.
    #[serde(rename = "AutomaticKickOff")]
    pub automatic_kick_off: bool,
    /// `WaitBeforeKickOff` (default 30 s).
    #[serde(rename = "WaitBeforeKickOff")]
    pub wait_before_kick_off: f32,
    /// `CoinTossForKickOff` (default false): when false the left team kicks
    /// off the first half; when true a coin toss decides.
    #[serde(rename = "CoinTossForKickOff")]
    pub coin_toss_for_kick_off: bool,
    /// `StartAnyFieldPosition` (default false): no own-half restrictions
    /// before kick-off, no kick-off clearance, no beam clamping.
    #[serde(rename = "StartAnyFieldPosition")]
    pub start_any_field_position: bool,
    /// `AutomaticQuit` (default false): the server quits 10 s into GameOver
    /// (the referee emits `Decision::Quit`).
    #[serde(rename = "AutomaticQuit")]
    pub automatic_quit: bool,
    /// `ChangeSidesInSecondHalf` (default false): the teams swap sides at half time.
    #[serde(rename = "ChangeSidesInSecondHalf")]
    pub change_sides_in_second_half: bool,
    /// `SingleHalfTime` (default false): the match ends after the first half.
    #[serde(rename = "SingleHalfTime")]
    pub single_half_time: bool,
    /// `RuleHalfTime` (default 300 s): length of a half.
    #[serde(rename = "RuleHalfTime")]
    pub half_time: f32,
    /// `RuleGoalPauseTime` (default 3 s): duration of Goal_Left / Goal_Right.
    #[serde(rename = "RuleGoalPauseTime")]
    pub goal_pause_time: f32,
    /// `RuleKickInPauseTime` (default 1 s): wait at the start of a set piece.
    #[serde(rename = "RuleKickInPauseTime")]
    pub kick_in_pause_time: f32,
    /// `RuleDropBallTime` (default 15 s; 0 disables): an untaken kick-off or
    /// set piece ends in a drop ball after this long.
    #[serde(rename = "RuleDropBallTime")]
    pub drop_ball_time: f32,
    /// `UseOffside` (default false): accepted, but offside is not
    /// implemented (as in the reference, where the check is compiled out).
    #[serde(rename = "UseOffside")]
    pub use_offside: bool,

    // ---- player fouls ----
    /// `MaxTouchGroupSize` (default 2): largest allowed group of touching players.
    #[serde(rename = "MaxTouchGroupSize")]
    pub max_touch_group_size: u32,
    /// `MaxPlayersInsideOwnArea` (default 3): illegal defence limit (goalie counted).
    #[serde(rename = "MaxPlayersInsideOwnArea")]
    pub max_players_inside_own_area: u32,
    /// `MinOppDistance` (default 0 m; 0 turns crowding off).
    #[serde(rename = "MinOppDistance")]
    pub min_opp_distance: f32,
    /// `Min2PlDistance` (default 0 m): crowding distance of a team's 2nd player.
    #[serde(rename = "Min2PlDistance")]
    pub min_2pl_distance: f32,
    /// `Min3PlDistance` (default 0 m): crowding distance of a team's 3rd player.
    #[serde(rename = "Min3PlDistance")]
    pub min_3pl_distance: f32,
    /// `NotStandingMaxTime` (default 30 s, integer): field player not standing.
    #[serde(rename = "NotStandingMaxTime")]
    pub not_standing_max_time: u32,
    /// `GoalieNotStandingMaxTime` (default 60 s, integer).
    #[serde(rename = "GoalieNotStandingMaxTime")]
    pub goalie_not_standing_max_time: u32,
    /// `GroundMaxTime` (default 15 s, integer): field player on the ground.
    #[serde(rename = "GroundMaxTime")]
    pub ground_max_time: u32,
    /// `GoalieGroundMaxTime` (default 30 s, integer).
    #[serde(rename = "GoalieGroundMaxTime")]
    pub goalie_ground_max_time: u32,
    /// `FoulHoldTime` (default 0.5 s): a fouled robot hangs in the air this
    /// long before it is moved off the field.
    #[serde(rename = "FoulHoldTime")]
    pub foul_hold_time: f32,
    /// `UseCharging` (default true).
    #[serde(rename = "UseCharging")]
    pub use_charging: bool,
    /// `ChargingMinSpeed` (default 0.4 m/s).
    #[serde(rename = "ChargingMinSpeed")]
    pub charging_min_speed: f32,
    /// `ChargingMinBallSpeedAngle` (default 30 deg).
    #[serde(rename = "ChargingMinBallSpeedAngle")]
    pub charging_min_ball_speed_angle: f32,
    /// `ChargingMinDeltaDist` (default 0.05 m).
    #[serde(rename = "ChargingMinDeltaDist")]
    pub charging_min_delta_dist: f32,
    /// `ChargingMinDeltaAng` (default 15 deg).
    #[serde(rename = "ChargingMinDeltaAng")]
    pub charging_min_delta_ang: f32,
    /// `ChargingImmunityTime` (default 1 s, integer).
    #[serde(rename = "ChargingImmunityTime")]
    pub charging_immunity_time: u32,
    /// `ChargingCollisionMinTime` (default 0.2 s).
    #[serde(rename = "ChargingCollisionMinTime")]
    pub charging_collision_min_time: f32,
    /// `ChargingMaxBallRulesDist` (default 1 m).
    #[serde(rename = "ChargingMaxBallRulesDist")]
    pub charging_max_ball_rules_dist: f32,
    /// `ChargingMinCollBallDist` (default 0.1 m).
    #[serde(rename = "ChargingMinCollBallDist")]
    pub charging_min_coll_ball_dist: f32,
    /// `ChargingMinCollisionSpeed` (default 0.2 m/s).
    #[serde(rename = "ChargingMinCollisionSpeed")]
    pub charging_min_collision_speed: f32,
    /// `MaxNumSafeRepositionAttempts` (default 100; 0 disables the safe-spot search).
    #[serde(rename = "MaxNumSafeRepositionAttempts")]
    pub max_num_safe_reposition_attempts: u32,

    // ---- beam ----
    /// `BeamNoiseXY` (default 0.05 m): uniform noise on beam x and y.
    #[serde(rename = "BeamNoiseXY")]
    pub beam_noise_xy: f32,
    /// `BeamNoiseAngle` (default 10 deg): uniform noise on the beam heading.
    #[serde(rename = "BeamNoiseAngle")]
    pub beam_noise_angle: f32,

    // ---- team composition (applied at init by the team admission code) ----
    /// `MaxRobotTypeCount` (default 7): robots of one type per team.
    #[serde(rename = "MaxRobotTypeCount")]
    pub max_robot_type_count: u32,
    /// `MinRobotTypesCount` (default 3): different types in a full team.
    #[serde(rename = "MinRobotTypesCount")]
    pub min_robot_types_count: u32,
    /// `MaxSumTwoRobotTypes` (default 9): robots in any two types together.
    #[serde(rename = "MaxSumTwoRobotTypes")]
    pub max_sum_two_robot_types: u32,

    // ---- special modes ----
    /// `PenaltyShootout` (default false).
    #[serde(rename = "PenaltyShootout")]
    pub penalty_shootout: bool,
    /// `Keepaway` (default false).
    #[serde(rename = "Keepaway")]
    pub keepaway: bool,
    /// `KeepawayCenterX` (default 0 m).
    #[serde(rename = "KeepawayCenterX")]
    pub keepaway_center_x: f32,
    /// `KeepawayCenterY` (default 0 m).
    #[serde(rename = "KeepawayCenterY")]
    pub keepaway_center_y: f32,
    /// `KeepawayLength` (default 20 m): initial x extent of the keepaway box.
    #[serde(rename = "KeepawayLength")]
    pub keepaway_length: f32,
    /// `KeepawayWidth` (default 20 m): initial y extent of the keepaway box.
    #[serde(rename = "KeepawayWidth")]
    pub keepaway_width: f32,
    /// `KeepawayLengthReductionRate` (default 4 m/min).
    #[serde(rename = "KeepawayLengthReductionRate")]
    pub keepaway_length_reduction_rate: f32,
    /// `KeepawayWidthReductionRate` (default 4 m/min).
    #[serde(rename = "KeepawayWidthReductionRate")]
    pub keepaway_width_reduction_rate: f32,

    // ---- reporting (used by perception, kept here with the other referee parameters) ----
    /// `ReportScore` (default true): agents' GS carries `sl`/`sr`.
    #[serde(rename = "ReportScore")]
    pub report_score: bool,
    /// `LabelMessages` (default true): hear messages carry the team name.
    #[serde(rename = "LabelMessages")]
    pub label_messages: bool,
}

impl Default for RulesConfig {
    fn default() -> Self {
        RulesConfig {
            referee_enabled: true,
            self_collision_foul: false,
            field_length: 30.0,
            field_width: 20.0,
            field_height: 40.0,
            goal_width: 2.1,
            goal_depth: 0.6,
            goal_height: 0.8,
            penalty_length: 1.8,
            penalty_width: 3.9,
            border_size: 0.0,
            agent_radius: 0.4,
            ball_radius: 0.042,
            ball_mass: 0.026,
            free_kick_distance: 2.0,
            free_kick_move_dist: 2.2,
            kick_repel_dist: 0.5,
            goal_kick_dist: 1.0,
            automatic_kick_off: false,
            wait_before_kick_off: 30.0,
            coin_toss_for_kick_off: false,
            start_any_field_position: false,
            automatic_quit: false,
            change_sides_in_second_half: false,
            single_half_time: false,
            half_time: 300.0,
            goal_pause_time: 3.0,
            kick_in_pause_time: 1.0,
            drop_ball_time: 15.0,
            use_offside: false,
            max_touch_group_size: 2,
            max_players_inside_own_area: 3,
            min_opp_distance: 0.0,
            min_2pl_distance: 0.0,
            min_3pl_distance: 0.0,
            not_standing_max_time: 30,
            goalie_not_standing_max_time: 60,
            ground_max_time: 15,
            goalie_ground_max_time: 30,
            foul_hold_time: 0.5,
            use_charging: true,
            charging_min_speed: 0.4,
            charging_min_ball_speed_angle: 30.0,
            charging_min_delta_dist: 0.05,
            charging_min_delta_ang: 15.0,
            charging_immunity_time: 1,
            charging_collision_min_time: 0.2,
            charging_max_ball_rules_dist: 1.0,
            charging_min_coll_ball_dist: 0.1,
            charging_min_collision_speed: 0.2,
            max_num_safe_reposition_attempts: 100,
            beam_noise_xy: 0.05,
            beam_noise_angle: 10.0,
            max_robot_type_count: 7,
            min_robot_types_count: 3,
            max_sum_two_robot_types: 9,
            penalty_shootout: false,
            keepaway: false,
            keepaway_center_x: 0.0,
            keepaway_center_y: 0.0,
            keepaway_length: 20.0,
            keepaway_width: 20.0,
            keepaway_length_reduction_rate: 4.0,
            keepaway_width_reduction_rate: 4.0,
            report_score: true,
            label_messages: true,
        }
    }
}

/// A configuration value the referee cannot work with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    /// A parameter that must be a finite number is not.
    #[error("rules parameter {name} must be a finite number, got {value}")]
    NotFinite {
        /// Reference name of the parameter.
        name: &'static str,
        /// The value found.
        value: f32,
    },
    /// A parameter that must be positive (or not negative) is out of range.
    #[error("rules parameter {name} must be {expected}, got {value}")]
    OutOfRange {
        /// Reference name of the parameter.
        name: &'static str,
        /// What was expected, e.g. "> 0".
        expected: &'static str,
        /// The value found.
        value: f32,
    },
}

impl RulesConfig {
    /// Checks that every number is finite, that sizes are positive and that
    /// durations, distances and noise amplitudes are not negative.
    pub fn validate(&self) -> Result<(), RulesError> {
        let positive = [
            ("FieldLength", self.field_length),
            ("FieldWidth", self.field_width),
            ("FieldHeight", self.field_height),
            ("GoalWidth", self.goal_width),
            ("GoalDepth", self.goal_depth),
            ("GoalHeight", self.goal_height),
            ("PenaltyLength", self.penalty_length),
            ("AgentRadius", self.agent_radius),
            ("BallRadius", self.ball_radius),
            ("BallMass", self.ball_mass),
            ("RuleHalfTime", self.half_time),
        ];
        let non_negative = [
            ("PenaltyWidth", self.penalty_width),
            ("BorderSize", self.border_size),
            ("FreeKickDistance", self.free_kick_distance),
            ("FreeKickMoveDist", self.free_kick_move_dist),
            ("KickRepelDist", self.kick_repel_dist),
            ("GoalKickDist", self.goal_kick_dist),
            ("WaitBeforeKickOff", self.wait_before_kick_off),
            ("RuleGoalPauseTime", self.goal_pause_time),
            ("RuleKickInPauseTime", self.kick_in_pause_time),
            ("RuleDropBallTime", self.drop_ball_time),
            ("MinOppDistance", self.min_opp_distance),
            ("Min2PlDistance", self.min_2pl_distance),
            ("Min3PlDistance", self.min_3pl_distance),
            ("FoulHoldTime", self.foul_hold_time),
            ("ChargingMinSpeed", self.charging_min_speed),
            (
                "ChargingMinBallSpeedAngle",
                self.charging_min_ball_speed_angle,
            ),
            ("ChargingMinDeltaDist", self.charging_min_delta_dist),
            ("ChargingMinDeltaAng", self.charging_min_delta_ang),
            ("ChargingCollisionMinTime", self.charging_collision_min_time),
            (
                "ChargingMaxBallRulesDist",
                self.charging_max_ball_rules_dist,
            ),
            ("ChargingMinCollBallDist", self.charging_min_coll_ball_dist),
            (
                "ChargingMinCollisionSpeed",
                self.charging_min_collision_speed,
            ),
            ("BeamNoiseXY", self.beam_noise_xy),
            ("BeamNoiseAngle", self.beam_noise_angle),
            ("KeepawayLength", self.keepaway_length),
            ("KeepawayWidth", self.keepaway_width),
        ];
        let any = [
            ("KeepawayCenterX", self.keepaway_center_x),
            ("KeepawayCenterY", self.keepaway_center_y),
            (
                "KeepawayLengthReductionRate",
                self.keepaway_length_reduction_rate,
            ),
            (
                "KeepawayWidthReductionRate",
                self.keepaway_width_reduction_rate,
            ),
        ];
        for (name, value) in positive.iter().chain(&non_negative).chain(&any) {
            if !value.is_finite() {
                return Err(RulesError::NotFinite {
                    name,
                    value: *value,
                });
            }
        }
        for (name, value) in positive {
            if value <= 0.0 {
                return Err(RulesError::OutOfRange {
                    name,
                    expected: "> 0",
                    value,
                });
            }
        }
        for (name, value) in non_negative {
            if value < 0.0 {
                return Err(RulesError::OutOfRange {
                    name,
                    expected: ">= 0",
                    value,
                });
            }
        }
        Ok(())
    }

    /// Half the field length: the goal lines are at x = ±this.
    pub fn half_length(&self) -> f32 {
        self.field_length / 2.0
    }

    /// Half the field width: the sidelines are at y = ±this.
    pub fn half_width(&self) -> f32 {
        self.field_width / 2.0
    }

    /// Half the width of a penalty area, `(PenaltyWidth + GoalWidth) / 2`.
    pub fn penalty_half_width(&self) -> f32 {
        (self.penalty_width + self.goal_width) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ron_gives_the_reference_defaults() {
        let cfg: RulesConfig = ron::from_str("()").expect("empty struct parses");
        assert_eq!(cfg, RulesConfig::default());
        assert_eq!(cfg.half_time, 300.0);
        assert_eq!(cfg.max_players_inside_own_area, 3);
        assert!(!cfg.change_sides_in_second_half);
    }

    #[test]
    fn reference_names_are_the_keys_and_unknown_keys_fail() {
        let cfg: RulesConfig = ron::from_str(
            "(RuleHalfTime: 10.0, GroundMaxTime: 5, BeamNoiseXY: 0.0, ChangeSidesInSecondHalf: true)",
        )
        .expect("parses");
        assert_eq!(cfg.half_time, 10.0);
        assert_eq!(cfg.ground_max_time, 5);
        assert_eq!(cfg.beam_noise_xy, 0.0);
        assert!(cfg.change_sides_in_second_half);
        assert!(ron::from_str::<RulesConfig>("(HalfTime: 10.0)").is_err());
    }

    #[test]
    fn validation_names_the_bad_parameter() {
        assert_eq!(RulesConfig::default().validate(), Ok(()));
        let cfg = RulesConfig {
            beam_noise_xy: -1.0,
            ..RulesConfig::default()
        };
        let err = cfg.validate().expect_err("negative noise");
        assert!(err.to_string().contains("BeamNoiseXY"), "{err}");
        let cfg = RulesConfig {
            half_time: f32::NAN,
            ..RulesConfig::default()
        };
        assert!(matches!(
            cfg.validate(),
            Err(RulesError::NotFinite {
                name: "RuleHalfTime",
                ..
            })
        ));
    }
}
