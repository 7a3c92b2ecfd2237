import BrokerDomain
import BrokerTestSupport
import Foundation

/// One synthetic person: identity and physiology, drawn from `(seed, number)` alone, so person 42 of seed 1 is the
/// same whoever asks, however large the population and however it is split into batches.
struct SyntheticPerson: Sendable {
    let number: Int
    let id: UUID
    let email: String
    let fullName: String
    let birthDate: CalendarDate
    let sex: Sex
    let fiscalCode: String
    /// Whole years on the population's last day.
    let age: Int

    // Physiology: where this person's readings centre and how they vary.
    let restingHeartRate: Double
    let systolicOffset: Double
    let diastolicOffset: Double
    let dailySteps: Double
    let weekendStepFactor: Double
    let heightCm: Double
    let weightKg: Double
    let sleepNeed: Double
    /// Readings come from a device, at the same minute past each hour.
    let minuteOfHour: Int
    let secondOfMinute: Int
    /// Chance that a day starts a run of days without any data (watch left at home, battery flat).
    let gapChance: Double
    let eveningPressureChance: Double

    /// Streams of randomness per purpose, so adding a draw to one never shifts the others.
    enum Stream: UInt64 {
        case profile = 1
        case gaps, heartRate, pressure, oxygen, activity, sleep, weight
    }

    static func email(seed: UInt64, number: Int) -> String {
        "synthetic-\(seed)-\(number)@population.data4help.example"
    }

    /// The `LIKE` pattern matching every email of one seed's population (`_` and `%` cannot occur in the prefix).
    static func emailPattern(seed: UInt64) -> String {
        "synthetic-\(seed)-%@population.data4help.example"
    }

    /// The person number in such an email, or nil if the email is not of this seed's population.
    static func number(inEmail email: String, seed: UInt64) -> Int? {
        let prefix = "synthetic-\(seed)-"
        let suffix = "@population.data4help.example"
        guard email.hasPrefix(prefix), email.hasSuffix(suffix) else { return nil }
        return Int(email.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// A UUIDv8 whose first half is the seed's and whose last twelve digits are the person number: stable across
    /// reruns, and consecutive people sort together, so their index entries land side by side.
    static func id(seed: UInt64, number: Int) -> UUID {
        let high = SeededRandom.mix(seed ^ 0x5EED_5EED_5EED_5EED)
        let low = UInt64(number)
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                0x80 | (byte(high, 6) & 0x0F), byte(high, 7),
                0x80 | (byte(low, 0) & 0x3F), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5),
                byte(low, 6), byte(low, 7)
            ))
    }

    init(seed: UInt64, number: Int, lastDay: Int) {
        var random = SeededRandom(seed: seed, UInt64(number), Stream.profile.rawValue)
        self.number = number
        id = Self.id(seed: seed, number: number)
        email = Self.email(seed: seed, number: number)

        sex = random.chance(0.5) ? .female : .male
        // Adults 18–90, fewer of them in the oldest years, roughly like the adult population of Italy.
        var years: Double
        repeat {
            years = random.uniform(18.01, 90.99)
        } while years > 65 && !random.chance(1 - 0.6 * (years - 65) / 26)
        let birthDay = lastDay - Int(years * 365.2425)
        birthDate = CalendarDate(dayNumber: birthDay)!
        let last = CalendarDate(dayNumber: lastDay)!
        age = last.year - birthDate.year - ((last.month, last.day) < (birthDate.month, birthDate.day) ? 1 : 0)

        let firstNames = sex == .female ? Self.femaleNames : Self.maleNames
        fullName = firstNames[random.below(firstNames.count)] + " " + Self.surnames[random.below(Self.surnames.count)]
        // An affine map with a multiplier prime to 26 is a bijection on the serials: distinct people get distinct
        // letters, and each seed scatters its people differently, so two populations rarely even share letters.
        let offset = Int(SeededRandom.mix(seed) % UInt64(SyntheticFiscalCode.serialCount))
        let serial = (number % SyntheticFiscalCode.serialCount * 7_919 + offset) % SyntheticFiscalCode.serialCount
        fiscalCode = SyntheticFiscalCode.make(
            serial: serial, birthDate: birthDate, sex: sex,
            place: SyntheticFiscalCode.places[random.below(SyntheticFiscalCode.places.count)])

        let decadesPast20 = Double(max(0, age - 20)) / 10
        restingHeartRate = random.uniform(55, 80)
        systolicOffset = random.normal(deviation: 8)
        diastolicOffset = random.normal(deviation: 5)
        // Older people walk less on average; some people of every age walk a lot.
        dailySteps = max(1_500, random.uniform(3_500, 12_000) * (1 - 0.06 * decadesPast20))
        weekendStepFactor = random.uniform(0.5, 1.2)  // most people walk less at weekends, some more
        heightCm = sex == .female ? random.normal(mean: 163, deviation: 6.5) : random.normal(mean: 176, deviation: 7)
        let bodyMassIndex = min(40, max(17.5, random.normal(mean: 23.5 + 0.4 * decadesPast20, deviation: 3.8)))
        weightKg = bodyMassIndex * (heightCm / 100) * (heightCm / 100)
        sleepNeed = min(9, max(5.5, random.normal(mean: 7.2, deviation: 0.6)))
        minuteOfHour = random.below(60)
        secondOfMinute = random.below(60)
        gapChance = random.uniform(0.003, 0.025)
        eveningPressureChance = random.uniform(0.1, 0.9)
    }

    static let femaleNames = [
        "Giulia", "Sofia", "Aurora", "Alice", "Ginevra", "Emma", "Giorgia", "Beatrice", "Anna", "Vittoria",
        "Francesca", "Chiara", "Sara", "Martina", "Elena", "Laura", "Valentina", "Federica", "Paola", "Maria",
        "Rosa", "Teresa", "Lucia", "Silvia", "Alessandra", "Elisa", "Marta", "Noemi", "Camilla", "Irene",
    ]
    static let maleNames = [
        "Leonardo", "Francesco", "Alessandro", "Lorenzo", "Mattia", "Tommaso", "Gabriele", "Andrea", "Riccardo",
        "Edoardo", "Matteo", "Giuseppe", "Marco", "Luca", "Giovanni", "Antonio", "Paolo", "Stefano", "Roberto",
        "Davide", "Simone", "Federico", "Pietro", "Salvatore", "Vincenzo", "Massimo", "Fabio", "Emanuele",
        "Nicola", "Carlo",
    ]
    static let surnames = [
        "Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco",
        "Bruno", "Gallo", "Conti", "De Luca", "Mancini", "Costa", "Giordano", "Rizzo", "Lombardi", "Moretti",
        "Barbieri", "Fontana", "Santoro", "Mariani", "Rinaldi", "Caruso", "Ferrara", "Galli", "Martini", "Leone",
        "Longo", "Gentile", "Martinelli", "Vitale", "Lombardo", "Serra", "Coppola", "De Santis", "D'Angelo",
        "Marchetti", "Parisi", "Villa", "Conte", "Ferraro", "Ferri", "Fabbri", "Bianco", "Marini", "Grasso",
        "Valentini",
    ]
}
