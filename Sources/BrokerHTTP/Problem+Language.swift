import BrokerDomain

extension Problem {
    /// The problem as a reader of `language` gets it: `title`, `detail` and the field errors' messages
    /// translated (`ProblemTranslation`), and nothing else: `type`, `status`, the fields' names and the
    /// extension members are what clients act on, the same in every language.
    package func localized(to language: Language) -> Problem {
        var problem = self
        problem.title = ProblemTranslation.text(title, in: language)
        problem.detail = ProblemTranslation.text(detail, in: language)
        problem.errors = errors.map { FieldError(field: $0.field, message: ProblemTranslation.fieldMessage($0.message, in: language)) }
        problem.headers[.contentLanguage] = language.rawValue
        return problem
    }
}
