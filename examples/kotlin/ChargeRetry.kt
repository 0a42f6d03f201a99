package shop.payments

import io.github.resilience4j.retry.Retry
import java.util.UUID

class ChargeService(private val retry: Retry, private val api: ChargesApi) {
    // Defect: Resilience4j calls the supplier again for every attempt, so the key
    // drawn inside it changes on each retry and a timed-out charge is made twice.
    // `idemlint check examples/ --diff` shows the fix: the key moves before the retry.
    fun charge(orderId: String, amountCents: Long): Charge {
        return retry.executeSupplier {
            val key = UUID.randomUUID().toString()
            api.createCharge(key, orderId, amountCents)
        }
    }

    // Fixed twin: one key per charge, minted before the retry; every attempt reuses it.
    fun chargeFixed(orderId: String, amountCents: Long): Charge {
        val key = UUID.randomUUID().toString()
        return retry.executeSupplier { api.createCharge(key, orderId, amountCents) }
    }
}

interface ChargesApi {
    fun createCharge(idempotencyKey: String, orderId: String, amountCents: Long): Charge
}

data class Charge(val id: String)
