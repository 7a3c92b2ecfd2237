import Foundation
import Logging
import PostgresNIO

package enum AccountStoreError: Error { case noRow }
