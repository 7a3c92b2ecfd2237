/// One line of a trace after the header: a sensor reading, or a workout.
///
/// Workouts are not an `SOSSampleType`: the server has no such sample type, and what is uploaded must stay
/// exactly the server's types.
public enum SOSTraceEntry: Sendable, Hashable {
    case sample(SOSSample)
    case workout(SOSWorkout)
}
