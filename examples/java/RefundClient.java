package shop.refunds;

import java.io.IOException;
import java.util.UUID;
import retrofit2.Call;
import retrofit2.Callback;
import retrofit2.Response;
import retrofit2.http.Body;
import retrofit2.http.Header;
import retrofit2.http.POST;

interface RefundsApi {
    @POST("v1/refunds")
    Call<Refund> createRefund(@Header("Idempotency-Key") String key, @Body RefundRequest body);
}

final class RefundClient {
    private final RefundsApi api;

    RefundClient(RefundsApi api) {
        this.api = api;
    }

    // Defect: on failure the callback calls the service method again with a new key,
    // so a refund whose response was lost is refunded twice.
    void refund(RefundRequest body) {
        api.createRefund(UUID.randomUUID().toString(), body).enqueue(new Callback<Refund>() {
            @Override
            public void onResponse(Call<Refund> call, Response<Refund> response) {}

            @Override
            public void onFailure(Call<Refund> call, Throwable t) {
                if (t instanceof IOException) {
                    api.createRefund(UUID.randomUUID().toString(), body).enqueue(this);
                }
            }
        });
    }

    // Fixed twin: `call.clone()` sends the same request, key included.
    void refundFixed(RefundRequest body) {
        api.createRefund(UUID.randomUUID().toString(), body).enqueue(new Callback<Refund>() {
            @Override
            public void onResponse(Call<Refund> call, Response<Refund> response) {}

            @Override
            public void onFailure(Call<Refund> call, Throwable t) {
                if (t instanceof IOException) {
                    call.clone().enqueue(this);
                }
            }
        });
    }
}

record RefundRequest(String chargeId, long amountCents) {}
record Refund(String id) {}
