import Foundation

enum AuditLogError: Error { case notAppended }
