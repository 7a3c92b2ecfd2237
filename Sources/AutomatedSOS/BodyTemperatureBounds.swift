import Foundation

/// The body temperature at which AutomatedSOS asks whether to call for help.
///
/// Sources, and how they are used — an alarm bound for a consumer device, not a diagnosis:
/// - Heat stroke is defined as a core temperature above 40 °C with central nervous system dysfunction
///   (Bouchama A. & Knochel J.P., "Heat stroke", N Engl J Med 346 (2002) 1978–1988); it is a medical
///   emergency in which survival depends on how fast the body is cooled. Hyperpyrexia, above 41 °C, is an
///   emergency whatever its cause. The bound is therefore "above 40 °C": above it a device cannot tell heat
///   stroke from a high fever, and both warrant the prompt. 39–40 °C, an ordinary high fever, does not.
/// - The sample is `body_temperature` as the server defines it: a body (core-equivalent) reading — oral,
///   ear, rectal, or a patch thermometer — not the wrist skin temperature watches track, which runs several
///   degrees below core. A skin sensor under-reads a fever, so it may miss one but not invent one; the rare
///   false high (a sensor in a sauna or in the sun) is what the persistence and the prompt are for.
/// - Not suppressed during activity: exertional heat stroke strikes during exercise (Bouchama & Knochel),
///   exactly when a workout would hide it. A runner who is well dismisses the prompt.
/// - Persistence: two readings above the bound within 30 minutes. Core temperature changes over minutes to
///   hours, not seconds, so two readings half an hour apart still describe one state, and people re-measure
///   a surprising reading after a few minutes; one reading (a thermometer held in a hot drink's wake) is not
///   enough.
public enum BodyTemperatureBounds {
    /// °C; a reading above it is critical.
    public static let high = 40.0
    public static let persistence = SOSPersistence(readings: 2, within: 30 * 60)
}
