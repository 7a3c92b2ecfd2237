import BrokerDomain

/// A list's `limit` or `cursor` it cannot take: the same 422 as any other invalid field.
extension InvalidPageRequest: ProblemConvertible {
    package var problem: Problem { Problem.validationFailed(errors) }
}
