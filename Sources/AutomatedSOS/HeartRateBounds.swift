/// Age-dependent critical heart-rate bounds (beats per minute) for a person who is not exercising.
///
/// Sources, and how they are used — these are alarm bounds for a consumer device, not a diagnosis:
/// - Children (under 18): the 1st and 99th centiles of heart rate by age in Fleming S. et al.,
///   "Normal ranges of heart rate and respiratory rate in children from birth to 18 years of age: a
///   systematic review of observational studies", The Lancet 377 (2011) 1011–1018 (the centile table
///   of its web appendix). Fleming's bands from 2 years up are whole years, used as they are. The first
///   and second years span several bands (birth, 0–3, 3–6, 6–9, 9–12 months; 12–18, 18–24 months) and
///   age is known here in whole years, so they take the widest range of their bands: the lowest 1st and
///   the highest 99th centile. A reading outside the range that 98 % of healthy children fall in,
///   persisting, is the paediatric signal. The table was checked against two independent transcriptions
///   that agree in every cell; compare it with the paper's appendix before any clinical use.
///   At 18 the bounds switch to the adult rules below, so the high bound jumps from 104 to 202: the
///   adult rule is about a heart beyond its maximum, not an unusual resting rate.
/// - Adults, low bound: 40 bpm. Guidelines call below 50–60 bpm bradycardia but treat it as benign in
///   fit people; below 40 bpm while awake is the conventional threshold for marked bradycardia that
///   warrants attention (2018 ACC/AHA/HRS bradycardia guideline discussion; 2021 ESC pacing guideline).
/// - Adults, high bound: the age-predicted maximum heart rate 220 − age (Fox, Naughton & Haskell, 1971),
///   the commonly used estimate; a rate above the maximum a heart should reach even in exercise, while the
///   person is not moving, is critical. It is an estimate with a spread of about ±10–12 bpm, which is one
///   reason the monitor requires persistence and suppresses the rule during activity.
public enum HeartRateBounds {
    /// Below this, a resting heart rate is critical for a person of `age` years.
    public static func low(age: Int) -> Double {
        switch age {
        case ..<1: 90
        case 1: 82
        case 2: 76
        case 3: 70
        case 4...5: 65
        case 6...7: 59
        case 8...11: 52
        case 12...14: 47
        case 15...17: 43
        default: 40
        }
    }

    /// Above this, a heart rate of a person of `age` years who is not active is critical.
    public static func high(age: Int) -> Double {
        switch age {
        case ..<1: 181
        case 1: 156
        case 2: 142
        case 3: 136
        case 4...5: 131
        case 6...7: 123
        case 8...11: 115
        case 12...14: 108
        case 15...17: 104
        default: Double(220 - min(age, 120))
        }
    }
}
