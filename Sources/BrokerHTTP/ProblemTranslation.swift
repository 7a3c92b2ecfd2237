import BrokerDomain

/// The API's problem texts in the languages other than English. English stays where each problem is made
/// (`Problem(…, title: "No such run", …)`), so a problem reads the same in the code as on the wire; this table
/// gives each English text its translation, keyed by the English with `{}` for each interpolated value
/// (`"Too many failed logins; try again in {} seconds."`). A text missing here is sent in English, never
/// left out; `ProblemTranslationTests` reads every problem's text out of the sources and fails on one
/// missing, so a new problem is translated in the commit that adds it.
package enum ProblemTranslation {
    /// `title` and `detail` of every problem.
    static let italian: [String: String] = [
        "A company with this VAT number already exists.":
            "Esiste già un'azienda con questa partita IVA.",
        "A request is already pending":
            "C'è già una richiesta in attesa",
        "A run can be edited only before it starts.":
            "Una corsa si può modificare solo prima della partenza.",
        "A value in the request cannot be stored (invalid characters or out of range).":
            "Un valore della richiesta non può essere salvato (caratteri non validi o fuori intervallo).",
        "API keys cannot manage API keys or the webhook, change the account's credentials or delete the account; sign in instead.":
            "Con una chiave API non si gestiscono chiavi API o webhook, non si cambiano le credenziali e non si elimina l'account: accedi con email e password.",
        "Account not activated":
            "Account non attivato",
        "Activate the account with the token from the activation mail first.":
            "Prima attiva l'account con il codice ricevuto nella mail di attivazione.",
        "Activation token expired":
            "Codice di attivazione scaduto",
        "Activation tokens are valid for 24 hours; ask for a new activation mail.":
            "I codici di attivazione valgono 24 ore: chiedi una nuova mail di attivazione.",
        "Already joined":
            "Iscrizione già fatta",
        "An account with this email already exists.":
            "Esiste già un account con questa email.",
        "An account with this fiscal code already exists.":
            "Esiste già un account con questo codice fiscale.",
        "An import is already running":
            "C'è già un'importazione in corso",
        "Auditors must enrol a second factor before anything else: start with POST /v1/me/second-factor, then confirm it with a first code (POST /v1/me/second-factor/confirmation).":
            "I revisori devono configurare un secondo fattore prima di ogni altra cosa: inizia con POST /v1/me/second-factor, poi confermalo con un primo codice (POST /v1/me/second-factor/confirmation).",
        "Auditors see no single requests.":
            "I revisori non vedono le richieste individuali.",
        "Authentication required":
            "Autenticazione richiesta",
        "Bad Request":
            "Richiesta non valida",
        "Bad Request.":
            "Richiesta non valida.",
        "Busy":
            "Occupato",
        "Check-in closed when the run started.":
            "Il check-in si è chiuso alla partenza della corsa.",
        "Check-in opens at {}, an hour before the start.":
            "Il check-in apre alle {}, un'ora prima della partenza.",
        "Check-in refused":
            "Check-in rifiutato",
        "Conflict":
            "Conflitto",
        "Conflict.":
            "Conflitto.",
        "Content Too Large":
            "Contenuto troppo grande",
        "Content Too Large.":
            "Contenuto troppo grande.",
        "Data can be downloaded only for an accepted request.":
            "I dati si possono scaricare solo per una richiesta accettata.",
        "Downloads are served by the streaming endpoint.":
            "I download sono serviti dall'endpoint in streaming.",
        "Email already registered":
            "Email già registrata",
        "Every place of this run is taken.":
            "Tutti i posti di questa corsa sono occupati.",
        "Fewer places than runners":
            "Meno posti che iscritti",
        "Fiscal code already registered":
            "Codice fiscale già registrato",
        "Forbidden":
            "Vietato",
        "Forbidden.":
            "Accesso vietato.",
        "Internal Server Error":
            "Errore interno del server",
        "Internal Server Error.":
            "Errore interno del server.",
        "Internal server error":
            "Errore interno del server",
        "Malformed request body":
            "Corpo della richiesta non valido",
        "Method Not Allowed":
            "Metodo non consentito",
        "Method Not Allowed.":
            "Metodo non consentito.",
        "Method not allowed":
            "Metodo non consentito",
        "Metrics are served only when the server is configured with METRICS_TOKEN.":
            "Le metriche sono disponibili solo se il server è configurato con METRICS_TOKEN.",
        "No active subscription":
            "Nessun abbonamento attivo",
        "No audit checkpoint has been signed yet.":
            "Non è ancora stato firmato alcun checkpoint del registro di audit.",
        "No enrolment to confirm":
            "Nessuna configurazione da confermare",
        "No position of yours in the last 5 minutes: start sharing your location, then check in.":
            "Nessuna tua posizione negli ultimi 5 minuti: attiva la condivisione della posizione, poi fai il check-in.",
        "No requested data":
            "Nessun dato richiesto",
        "No results of this group request have been released.":
            "Non è stato ancora pubblicato alcun risultato di questa richiesta di gruppo.",
        "No room for the upload":
            "Nessuno spazio per il caricamento",
        "No second factor":
            "Nessun secondo fattore",
        "No such API key.":
            "Questa chiave API non esiste.",
        "No such company":
            "Azienda inesistente",
        "No such group request":
            "Richiesta di gruppo inesistente",
        "No such import":
            "Importazione inesistente",
        "No such request":
            "Richiesta inesistente",
        "No such run":
            "Corsa inesistente",
        "No third party has this id.":
            "Nessuna azienda ha questo id.",
        "No webhook is registered; register one with PUT /v1/webhook.":
            "Nessun webhook registrato: registrane uno con PUT /v1/webhook.",
        "Not Acceptable":
            "Formato non accettabile",
        "Not Acceptable.":
            "Nessuno dei formati richiesti è disponibile.",
        "Not Found":
            "Non trovato",
        "Not Found.":
            "Non trovato.",
        "Not a runner of this run":
            "Non sei iscritto a questa corsa",
        "Not allowed for this role":
            "Non consentito a questo ruolo",
        "Not allowed with an API key":
            "Non consentito con una chiave API",
        "Not blocked":
            "Non bloccata",
        "Not for your account":
            "Non per il tuo account",
        "Not found":
            "Non trovato",
        "Not ready":
            "Non pronto",
        "Nothing released yet":
            "Ancora nulla di pubblicato",
        "One of your imports is still running; wait until it has finished (its status URL says when), then import again.":
            "Una delle tue importazioni è ancora in corso: attendi che finisca (lo indica il suo URL di stato), poi importa di nuovo.",
        "One or more fields are invalid.":
            "Uno o più campi non sono validi.",
        "Only auditors read every company's group requests.":
            "Solo i revisori leggono le richieste di gruppo di tutte le aziende.",
        "Only auditors read the audit log's checkpoints.":
            "Solo i revisori leggono i checkpoint del registro di audit.",
        "Only auditors read the audit log.":
            "Solo i revisori leggono il registro di audit.",
        "Only auditors read the privacy ledger.":
            "Solo i revisori leggono il registro della privacy.",
        "Only auditors read this.":
            "Solo i revisori possono leggerlo.",
        "Only auditors verify the audit log.":
            "Solo i revisori verificano il registro di audit.",
        "Only companies have a privacy budget.":
            "Solo le aziende hanno un budget di privacy.",
        "Only people (role user) hold health data.":
            "Solo le persone (ruolo user) hanno dati sanitari.",
        "Only people block companies.":
            "Solo le persone bloccano le aziende.",
        "Only people choose what they share.":
            "Solo le persone scelgono cosa condividere.",
        "Only people have an access log.":
            "Solo le persone hanno un registro degli accessi.",
        "Only people have a privacy loss of their own.":
            "Solo le persone hanno una perdita di privacy propria.",
        "Only people have consent receipts of their own; companies read a request's.":
            "Solo le persone hanno ricevute di consenso proprie; le aziende leggono quelle di una richiesta.",
        "Only people join runs.":
            "Solo le persone si iscrivono alle corse.",
        "Only people leave runs.":
            "Solo le persone lasciano le corse.",
        "Only people take part in runs.":
            "Solo le persone partecipano alle corse.",
        "Only runners check in.":
            "Solo gli iscritti fanno il check-in.",
        "Only runners set a privacy zone.":
            "Solo gli iscritti impostano una zona privata.",
        "Only the organiser cancels a run.":
            "Solo l'organizzatore annulla una corsa.",
        "Only the organiser edits a run.":
            "Solo l'organizzatore modifica una corsa.",
        "Only the person asked accepts or refuses a request.":
            "Solo la persona a cui è rivolta accetta o rifiuta una richiesta.",
        "Only the sender cancels a request.":
            "Solo chi l'ha inviata annulla una richiesta.",
        "Only the sender downloads a request's data.":
            "Solo chi ha inviato la richiesta ne scarica i dati.",
        "Only the sender ends a group subscription.":
            "Solo chi l'ha inviata termina un abbonamento di gruppo.",
        "Only the sender reads a group request here; auditors use /v1/audit.":
            "Qui una richiesta di gruppo la legge solo chi l'ha inviata; i revisori usano /v1/audit.",
        "Only the sender reads results here; auditors use /v1/audit.":
            "Qui i risultati li legge solo chi ha inviato la richiesta; i revisori usano /v1/audit.",
        "Only third parties list their group requests; auditors use /v1/audit.":
            "Solo le aziende elencano le proprie richieste di gruppo; i revisori usano /v1/audit.",
        "Only third parties organise runs.":
            "Solo le aziende organizzano corse.",
        "Only third parties send group requests.":
            "Solo le aziende inviano richieste di gruppo.",
        "Only third parties send single requests.":
            "Solo le aziende inviano richieste individuali.",
        "Only upcoming runs can be joined.":
            "Ci si può iscrivere solo alle corse non ancora partite.",
        "Other releases changed this cohort's privacy budgets while it was evaluated; nothing was released. Try again.":
            "Altre pubblicazioni hanno modificato i budget di privacy di questo gruppo durante la valutazione; non è stato pubblicato nulla. Riprova.",
        "Password reset token expired":
            "Codice per reimpostare la password scaduto",
        "Password reset tokens are valid for one hour; ask for a new password reset mail.":
            "I codici per reimpostare la password valgono un'ora: chiedi una nuova mail per reimpostare la password.",
        "Privacy budget exhausted":
            "Budget di privacy esaurito",
        "Read-only API key":
            "Chiave API di sola lettura",
        "Registration expired":
            "Registrazione scaduta",
        "Request body too large":
            "Corpo della richiesta troppo grande",
        "Request body too slow":
            "Corpo della richiesta troppo lento",
        "Results exist only for accepted group requests.":
            "I risultati esistono solo per le richieste di gruppo accettate.",
        "Second factor required":
            "Secondo fattore obbligatorio",
        "Send a Content-Type with a body.":
            "Invia un Content-Type insieme al corpo.",
        "Send a valid session token or API key as `Authorization: Bearer <token>`.":
            "Invia un token di sessione o una chiave API validi come `Authorization: Bearer <token>`.",
        "Send the metrics token as `Authorization: Bearer <METRICS_TOKEN>`.":
            "Invia il token delle metriche come `Authorization: Bearer <METRICS_TOKEN>`.",
        "Service Unavailable":
            "Servizio non disponibile",
        "Service Unavailable.":
            "Servizio non disponibile.",
        "Service busy":
            "Servizio occupato",
        "Service unavailable":
            "Servizio non disponibile",
        "Something went wrong on our side; the request was not completed.":
            "Si è verificato un errore da parte nostra; la richiesta non è stata completata.",
        "Start enrolling a second factor (POST /v1/me/second-factor) before confirming it.":
            "Avvia la configurazione di un secondo fattore (POST /v1/me/second-factor) prima di confermarla.",
        "The body arrived slower than {} KiB/s after the first {} seconds.":
            "Il corpo è arrivato più lentamente di {} KiB/s dopo i primi {} secondi.",
        "The body is not valid JSON of the expected shape.":
            "Il corpo non è un JSON valido della forma attesa.",
        "The body is over the limit of {} MiB for this endpoint.":
            "Il corpo supera il limite di {} MiB di questo endpoint.",
        "The code is wrong, expired or already used, or the sign-in has expired: sign in again if it keeps failing.":
            "Il codice è sbagliato, scaduto o già usato, oppure l'accesso è scaduto: se l'errore si ripete, accedi di nuovo.",
        "The database is not reachable right now. Try again in a few seconds.":
            "Il database al momento non è raggiungibile. Riprova tra qualche secondo.",
        "The database is not reachable.":
            "Il database non è raggiungibile.",
        "The email or the password is wrong.":
            "L'email o la password non sono corrette.",
        "The export is served by the streaming endpoint.":
            "L'esportazione è servita dall'endpoint in streaming.",
        "The file cannot be imported":
            "Il file non può essere importato",
        "The form was not sent from one of our pages, or you signed in or out since it was shown. Reload the page and try again.":
            "Il modulo non è stato inviato da una nostra pagina, oppure nel frattempo hai effettuato l'accesso o sei uscito. Ricarica la pagina e riprova.",
        "The group request was refused":
            "La richiesta di gruppo è stata rifiutata",
        "The group request was refused.":
            "La richiesta di gruppo è stata rifiutata.",
        "The import was interrupted":
            "L'importazione è stata interrotta",
        "The live feed is served by the streaming endpoint.":
            "La diretta è servita dall'endpoint in streaming.",
        "The person has no data of the requested types in the granted range.":
            "La persona non ha dati dei tipi richiesti nel periodo concesso.",
        "The request could not be read.":
            "Non è stato possibile leggere la richiesta.",
        "The request is already {}.":
            "La richiesta è già {}.",
        "The request is invalid":
            "La richiesta non è valida",
        "The request is not accepted":
            "La richiesta non è accettata",
        "The request is not pending":
            "La richiesta non è in attesa",
        "The request is still pending; its subscription has not started.":
            "La richiesta è ancora in attesa; il suo abbonamento non è iniziato.",
        "The request was {}; its subscription never started.":
            "La richiesta è stata {}; il suo abbonamento non è mai iniziato.",
        "The run has finished.":
            "La corsa è terminata.",
        "The run has started: end the run's subscription to stop sharing your position.":
            "La corsa è partita: termina l'abbonamento della corsa per smettere di condividere la tua posizione.",
        "The run is already cancelled.":
            "La corsa è già annullata.",
        "The run is full":
            "La corsa è al completo",
        "The run no longer changes":
            "La corsa non si può più modificare",
        "The server has no room left to receive this upload; nothing was stored. Try again later.":
            "Il server non ha più spazio per ricevere questo caricamento; non è stato salvato nulla. Riprova più tardi.",
        "The server is running as many large imports as it can; nothing was stored. Try again in a minute.":
            "Il server sta già eseguendo tutte le importazioni grandi che può; non è stato salvato nulla. Riprova tra un minuto.",
        "The server is too busy to answer this request right now; nothing was changed. Try again in a few seconds.":
            "Il server al momento è troppo occupato per rispondere; non è stato modificato nulla. Riprova tra qualche secondo.",
        "The server restarted during the import; nothing was stored — import the file again.":
            "Il server si è riavviato durante l'importazione; non è stato salvato nulla: importa di nuovo il file.",
        "The subscription has already ended.":
            "L'abbonamento è già terminato.",
        "The subscription has already expired.":
            "L'abbonamento è già scaduto.",
        "The subscription is active.":
            "L'abbonamento è attivo.",
        "The unsubscribe link is incomplete or was altered. Sign in and choose your mails on your account page.":
            "Il link per disattivare le email è incompleto o è stato alterato. Accedi e scegli le email che vuoi ricevere dalla pagina del tuo account.",
        "There is no group request with this id among those you may see.":
            "Tra quelle che puoi vedere non c'è alcuna richiesta di gruppo con questo id.",
        "There is no import with this id among yours.":
            "Tra le tue non c'è alcuna importazione con questo id.",
        "There is no run with this id.":
            "Non c'è alcuna corsa con questo id.",
        "There is no single request with this id among yours.":
            "Tra le tue non c'è alcuna richiesta individuale con questo id.",
        "There is nothing at this path.":
            "A questo indirizzo non c'è nulla.",
        "This API key is read-only; this operation changes data.":
            "Questa chiave API è di sola lettura; questa operazione modifica dei dati.",
        "This account has no second factor.":
            "Questo account non ha un secondo fattore.",
        "This account may make at most {} {}; try again in {} seconds. Nothing was done.":
            "Questo account può fare al massimo {} {}; riprova tra {} secondi. Non è stato fatto nulla.",
        "This account was not activated within {} hours and no longer exists; register again.":
            "Questo account non è stato attivato entro {} ore e non esiste più: registrati di nuovo.",
        "This activation token does not exist or was already used.":
            "Questo codice di attivazione non esiste o è già stato usato.",
        "This endpoint accepts application/json bodies.":
            "Questo endpoint accetta corpi application/json.",
        "This endpoint accepts {} bodies.":
            "Questo endpoint accetta corpi {}.",
        "This form has expired":
            "Questo modulo è scaduto",
        "This group request has no subscription.":
            "Questa richiesta di gruppo non ha un abbonamento.",
        "This link is not valid":
            "Questo link non è valido",
        "This operation is not available to the caller's role.":
            "Questa operazione non è disponibile per il tuo ruolo.",
        "This page is for {}; you are signed in as {}.":
            "Questa pagina è per {}; hai effettuato l'accesso come {}.",
        "This password reset token does not exist, was already used, or a newer one was mailed since.":
            "Questo codice per reimpostare la password non esiste, è già stato usato oppure nel frattempo ne è stato inviato uno più recente.",
        "This path accepts {}.":
            "Questo percorso accetta {}.",
        "This release would cost ρ = {}, more than what remains of your privacy budget until {}, when earlier releases stop counting.":
            "Questa pubblicazione costerebbe ρ = {}, più di quanto resta del tuo budget di privacy fino al {}, quando le pubblicazioni precedenti smettono di contare.",
        "This release would cost ρ = {}, more than what remains of your privacy budget.":
            "Questa pubblicazione costerebbe ρ = {}, più di quanto resta del tuo budget di privacy.",
        "This request has no subscription.":
            "Questa richiesta non ha un abbonamento.",
        "This server signs no audit checkpoints (AUDIT_SIGNING_KEY_FILE is not set).":
            "Questo server non firma checkpoint di audit (AUDIT_SIGNING_KEY_FILE non è impostato).",
        "Too Many Requests":
            "Troppe richieste",
        "Too Many Requests.":
            "Troppe richieste.",
        "Too many failed logins":
            "Troppi accessi non riusciti",
        "Too many failed logins; try again in {} seconds.":
            "Troppi accessi non riusciti; riprova tra {} secondi.",
        "Too many requests":
            "Troppe richieste",
        "Unauthorized":
            "Non autorizzato",
        "Unauthorized.":
            "Non autorizzato.",
        "Unknown activation token":
            "Codice di attivazione sconosciuto",
        "Unknown kind of mail: {}.":
            "Tipo di email sconosciuto: {}.",
        "Unknown password reset token":
            "Codice per reimpostare la password sconosciuto",
        "Unprocessable Content":
            "Contenuto non elaborabile",
        "Unprocessable Content.":
            "Contenuto non elaborabile.",
        "Unsupported Media Type":
            "Tipo di contenuto non supportato",
        "Unsupported Media Type.":
            "Tipo di contenuto non supportato.",
        "VAT number already registered":
            "Partita IVA già registrata",
        "Wrong code":
            "Codice errato",
        "Wrong email or password":
            "Email o password errate",
        "You already have a pending request to this email or fiscal code; wait for it to be answered, cancel it, or let it expire.":
            "Hai già una richiesta in attesa verso questa email o questo codice fiscale: aspetta la risposta, annullala o lasciala scadere.",
        "You are {} m from the start; check in within {} m.":
            "Sei a {} m dalla partenza; il check-in si fa entro {} m.",
        "You have already joined this run.":
            "Sei già iscritto a questa corsa.",
        "You have not blocked this company.":
            "Non hai bloccato questa azienda.",
        "You have not joined this run.":
            "Non sei iscritto a questa corsa.",
        "{} Nothing from this file was stored.":
            "{} Di questo file non è stato salvato nulla.",
        "{} runners have joined; the run cannot have fewer places.":
            "Si sono iscritti {} corridori; la corsa non può avere meno posti.",
        "{}: {}":
            "{}: {}",
        // FHIR bulk export (`BulkExportError`, `BulkExportService`).
        "Unsupported export parameters":
            "Parametri di esportazione non supportati",
        "This server cannot run the export as asked; errors names each parameter. Nothing was started.":
            "Questo server non può eseguire l'esportazione così come richiesta; errors indica ciascun parametro. Non è stato avviato nulla.",
        "An export is already being planned":
            "C'è già un'esportazione in preparazione",
        "One of your bulk exports is still being planned; poll its status URL, then start the next one.":
            "Una delle tue esportazioni è ancora in preparazione: controlla il suo URL di stato, poi avvia la successiva.",
        "No such export":
            "Esportazione inesistente",
        "There is no bulk export or file with this id among yours, or it expired.":
            "Tra le tue non c'è un'esportazione o un file con questo id, oppure è scaduto.",
        "Only companies export the data of their requests.":
            "Solo le aziende esportano i dati delle proprie richieste.",
        "Too many FHIR Bundles are being read":
            "Troppi Bundle FHIR in lettura",
        "The server reads a few FHIR Bundle uploads at a time and all of them are in use; send it again in a few seconds.":
            "Il server legge pochi Bundle FHIR alla volta e sono tutti in uso; invialo di nuovo tra qualche secondo.",
    ]

    /// The messages of field errors (`errors[].message`) that most forms meet: the decoding errors,
    /// registration, the profile, lists. The capabilities' own rules (a group request's, a run's, an
    /// upload's) still answer in English: their messages are built in the domain from many parts.
    static let italianFieldMessages: [String: String] = [
        "must be a whole number":
            "deve essere un numero intero",
        "choose the data type these bounds apply to":
            "scegli il tipo di dati a cui si applicano questi limiti",
        "must be day, week or month":
            "deve essere day, week o month",
        "Tick the box to confirm that everything is deleted.":
            "Seleziona la casella per confermare che viene eliminato tutto.",
        "must be one of en, it":
            "deve essere en o it",
        "must be json, csv or ndjson":
            "deve essere json, csv o ndjson",
        "must be json or csv":
            "deve essere json o csv",
        "must be json, csv, fhir or ndjson":
            "deve essere json, csv, fhir o ndjson",
        "must be json, fhir or ndjson":
            "deve essere json, fhir o ndjson",
        "fhir and ndjson hold a person's samples; use json":
            "fhir e ndjson contengono i dati di una persona; usa json",
        "must be application/fhir+ndjson, application/ndjson or ndjson":
            "deve essere application/fhir+ndjson, application/ndjson o ndjson",
        "must be a FHIR instant such as 2026-03-01T08:00:00Z":
            "deve essere un istante FHIR come 2026-03-01T08:00:00Z",
        "cannot be changed":
            "non può essere modificato",
        "check character does not match":
            "il carattere di controllo non corrisponde",
        "check digit does not match":
            "la cifra di controllo non corrisponde",
        "day must be 01-31, or 41-71 for women":
            "il giorno deve essere 01-31, oppure 41-71 per le donne",
        "does not agree with sex":
            "non corrisponde al sesso",
        "does not agree with the day of birthDate":
            "non corrisponde al giorno di nascita",
        "does not agree with the month of birthDate":
            "non corrisponde al mese di nascita",
        "does not agree with the year of birthDate":
            "non corrisponde all'anno di nascita",
        "has a value of the wrong type":
            "ha un valore del tipo sbagliato",
        "has an invalid value":
            "ha un valore non valido",
        "is invalid":
            "non è valido",
        "is not a cursor this API gave out":
            "non è un cursore fornito da questa API",
        "is not a field of a {} account":
            "non è un campo di un account {}",
        "is repeated":
            "è ripetuto",
        "is required":
            "è obbligatorio",
        "is required to change the password":
            "è obbligatoria per cambiare la password",
        "is required with currentPassword":
            "è obbligatoria insieme a currentPassword",
        "is wrong":
            "non è corretta",
        "month letter must be one of A B C D E H L M P R S T":
            "la lettera del mese deve essere una tra A B C D E H L M P R S T",
        "must be 11 digits":
            "deve avere 11 cifre",
        "must be 16 characters":
            "deve avere 16 caratteri",
        "must be 6 letters, 2 digits, a month letter, 2 digits, a letter, 3 digits and a check letter":
            "deve essere composto da 6 lettere, 2 cifre, la lettera del mese, 2 cifre, una lettera, 3 cifre e il carattere di controllo",
        "must be F or M":
            "deve essere F o M",
        "must be a date (YYYY-MM-DD)":
            "deve essere una data (AAAA-MM-GG)",
        "must be a number":
            "deve essere un numero",
        "must be a real date as YYYY-MM-DD":
            "deve essere una data reale nel formato AAAA-MM-GG",
        "must be a string":
            "deve essere una stringa",
        "must be an IANA time zone name such as Europe/Rome":
            "deve essere il nome di un fuso orario IANA, come Europe/Rome",
        "must be an RFC 3339 time":
            "deve essere un orario RFC 3339",
        "must be an RFC 3339 time such as 2026-03-01T08:00:00Z":
            "deve essere un orario RFC 3339 come 2026-03-01T08:00:00Z",
        "must be an array":
            "deve essere un array",
        "must be an integer":
            "deve essere un numero intero",
        "must be an object":
            "deve essere un oggetto",
        "must be at least {} characters":
            "deve avere almeno {} caratteri",
        "must be at most {} characters":
            "deve avere al massimo {} caratteri",
        "must be between 1900-01-01 and today":
            "deve essere compresa tra il 1900-01-01 e oggi",
        "must be csv, apple-health-xml or apple-health-zip":
            "deve essere csv, apple-health-xml o apple-health-zip",
        "must be in the future":
            "deve essere nel futuro",
        "must be one line, without line breaks":
            "deve stare su una riga, senza a capo",
        "must be true or false":
            "deve essere true o false",
        "must contain exactly one @":
            "deve contenere esattamente una @",
        "must contain only digits":
            "deve contenere solo cifre",
        "must have a name before the @":
            "deve avere un nome prima della @",
        "must not be all zeros":
            "non può essere composta solo da zeri",
        "must not be empty":
            "non può essere vuoto",
        "must not be null":
            "non può essere null",
        "must not be the same as the email address":
            "non può coincidere con l'indirizzo email",
        "must not contain control characters":
            "non può contenere caratteri di controllo",
        "must not contain spaces or control characters":
            "non può contenere spazi o caratteri di controllo",
        "name at least one type":
            "indica almeno un tipo",
        "the part after the @ must be a domain name such as example.com":
            "la parte dopo la @ deve essere un nome di dominio come example.com",
        "the part before the @ may hold only letters, digits, single inner dots and !#$%&'*+-/=?^_`{|}~":
            "la parte prima della @ può contenere solo lettere, cifre, singoli punti interni e !#$%&'*+-/=?^_`{|}~",
        "the part before the @ must be at most {} characters":
            "la parte prima della @ deve avere al massimo {} caratteri",
        "is wrong, expired or already used":
            "è errato, scaduto o già usato",
        "{} is not a notification this account receives":
            "{} non è una notifica che questo account riceve",
        "is required (or {})":
            "è obbligatorio (oppure {})",
        "goes instead of {}, not with it":
            "va al posto di {}, non insieme",
        "is required to replace a second factor":
            "è obbligatorio per sostituire un secondo fattore",
    ]

    /// Values that appear inside a text (`The request is already {}.`): a request's status, a role.
    static let italianWords: [String: String] = [
        "accepted": "accettata", "refused": "rifiutata", "pending": "in attesa", "cancelled": "annullata", "expired": "scaduta",
        "user": "persona", "third party": "azienda", "auditor": "revisore",
        "people sharing their data": "le persone che condividono i propri dati", "companies": "le aziende", "auditors": "i revisori",
        "a person": "una persona", "a company": "un'azienda", "an auditor": "un revisore",
        "sample uploads": "caricamenti di campioni", "Apple Health imports": "importazioni da Apple Health", "downloads": "download",
        "new group requests": "nuove richieste di gruppo", "statistics requests": "richieste di statistiche",
    ]

    /// `text` in `language`; the English itself when the table has no translation of it.
    package static func text(_ text: String, in language: Language) -> String {
        translation(of: text, in: language, table: italian) ?? text
    }

    /// A field error's message in `language`; the English itself when the table has none.
    package static func fieldMessage(_ text: String, in language: Language) -> String {
        translation(of: text, in: language, table: italianFieldMessages) ?? text
    }

    /// The translation of `text` by `table`, nil when it has none: an exact entry, else the first entry
    /// whose `{}` parts match (their values carried over, translated when they are words of `italianWords`).
    static func translation(of text: String, in language: Language, table: [String: String]) -> String? {
        switch language {
        case .en: return text
        case .it:
            if let exact = table[text] { return exact }
            // The template with the most fixed text first: `{}: {}` must not take what a longer one names.
            let templates = table.filter { $0.key.contains("{}") }
                .sorted { ($0.key.count, $0.key) > ($1.key.count, $1.key) }
            for (english, italian) in templates {
                guard let values = match(text, template: english) else { continue }
                var result = ""
                var remaining = values[...]
                for (index, part) in italian.components(separatedBy: "{}").enumerated() {
                    if index > 0, let value = remaining.popFirst() { result += italianWords[value] ?? value }
                    result += part
                }
                return result
            }
            return nil
        }
    }

    /// The values in `text` where `template` has `{}`, nil when the text is not of that template.
    static func match(_ text: String, template: String) -> [String]? {
        let parts = template.components(separatedBy: "{}")
        guard parts.count > 1, text.hasPrefix(parts[0]), text.hasSuffix(parts[parts.count - 1]),
            text.count >= parts.reduce(0, { $0 + $1.count })
        else { return nil }
        var values: [String] = []
        var rest = text.dropFirst(parts[0].count).dropLast(parts[parts.count - 1].count)
        for part in parts.dropFirst().dropLast() {
            guard let range = rest.range(of: part), range.lowerBound > rest.startIndex else { return nil }
            values.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        guard !rest.isEmpty else { return nil }
        return values + [String(rest)]
    }
}
