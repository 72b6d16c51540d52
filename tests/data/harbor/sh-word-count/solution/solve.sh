#!/bin/bash
printf '#!/bin/bash\nwc -w | tr -d " "\n' > /app/count.sh
