import Foundation

/// The oxygen saturation (SpO₂, %) bounds of AutomatedSOS: one for a person at rest, a lower one that
/// applies whatever they are doing.
///
/// Sources, and how they are used — alarm bounds for a consumer device, not a diagnosis:
/// - BTS guideline for oxygen use in adults in healthcare and emergency settings (O'Driscoll B.R. et al.,
///   Thorax 72 Suppl 1 (2017) ii1–ii90): the target range for acutely ill adults is 94–98 %, 88–92 % for
///   those at risk of hypercapnic respiratory failure (such as severe COPD); clinical assessment is
///   recommended when saturation falls by 3 % or more or below the target range. Below 90 % is the
///   conventional threshold of hypoxaemia (on the dissociation curve it corresponds to an arterial PO₂ of
///   about 60 mmHg, 8 kPa, the definition of respiratory failure).
/// - Pulse oximeters are accurate to about ±2–4 % (ISO 80601-2-61 accepts an A_rms up to 4 % over
///   70–100 %); wrist and finger devices worn in daily life are worse, and motion, cold fingers and poor
///   perfusion read falsely low. So a single reading means little: the rules ask for persistence, and the
///   at-rest rule for more of it.
/// - Exercise-induced arterial hypoxaemia: fit, healthy people desaturate in heavy exercise — mild 93–95 %,
///   moderate 88–93 %, severe below 88 % (Dempsey J.A. & Wagner P.D., "Exercise-induced arterial hypoxemia",
///   J Appl Physiol 87 (1999) 1997–2006) — and exercise is when motion artefacts are worst.
///
/// Hence two rules:
/// - `oxygen_saturation_low_at_rest`: below 90 % while not active, three consecutive readings within
///   10 minutes. At rest, below 90 % is hypoxaemia for anyone without a lower target; three readings make a
///   reading error or a brief artefact unlikely. A person whose clinician set a lower target (88–92 % in
///   COPD) lowers this threshold to 88 in their policy.
/// - `oxygen_saturation_low`: below 85 %, whatever the person is doing, two readings within 5 minutes: below
///   even the severe band healthy athletes reach, with a margin for the oximeter's error, so exercise does
///   not explain it. (Before the at-rest rule existed this rule was below 90 % at any time, which called
///   for help on motion artefacts during exercise.)
public enum OxygenSaturationBounds {
    /// %; at rest, a reading below it is critical.
    public static let lowAtRest = 90.0
    public static let atRestPersistence = SOSPersistence(readings: 3, within: 10 * 60)
    /// %; below it a reading is critical whatever the person is doing.
    public static let low = 85.0
}
